import { afterSql, deleteDoomed, type SqlQuery, type Store } from '../../store';

/**
 * Ends the record of an owner that is gone (its lease ended without a settle), conditional on
 * the generation the caller saw: failed when it never started an attempt (nothing was sent, so
 * the key is claimable again, also with another request), unknown when it had.
 */
export const abandonKeySql = (
	store: Store,
	input: { scope: string; key: string; generation: number | string | null },
): SqlQuery => ({
	text: `
UPDATE ${store.table('idempotency_keys')}
SET status = CASE WHEN attempts = 0 THEN 'failed' ELSE 'unknown' END, lease_until = now(), updated_at = now(),
    last_error = coalesce(last_error, 'its owner (execution ' || coalesce(execution_id, '?') || ') ended without settling it'),
    history = history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'abandoned', 'execution', execution_id))
WHERE scope = $1 AND key = $2 AND generation = $3 AND status = 'in_progress' AND lease_until < now()
RETURNING status`,
	values: [input.scope, input.key, input.generation],
});

/**
 * The same for every open record of an execution known to be dead (its execution crashed), at
 * once instead of after its leases end.
 */
export const abandonExecutionKeysSql = (
	store: Store,
	input: { executionId: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('idempotency_keys')}
SET status = CASE WHEN attempts = 0 THEN 'failed' ELSE 'unknown' END, lease_until = now(), updated_at = now(),
    last_error = coalesce(last_error, 'its owner (execution ' || coalesce(execution_id, '?') || ') ended without settling it'),
    history = history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'abandoned', 'execution', execution_id))
WHERE execution_id = $1 AND status = 'in_progress'
RETURNING scope, key, status`,
	values: [input.executionId],
});

/**
 * Deletes settled records past retention, one slice of `limit`. Records in progress or with an
 * unknown outcome are never purged: they are the only trace of a write that may have happened.
 * SKIP LOCKED: a record a write holds is left for the next purge rather than waited on.
 */
export const purgeKeysSql = (
	store: Store,
	input: { limit: number; after?: string | null },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid, expires_at AS at FROM ${store.table('idempotency_keys')}
	WHERE expires_at < now() AND ${afterSql('expires_at', 2, 'timestamptz')}
	  AND status IN ('succeeded', 'failed', 'compensated')
	ORDER BY expires_at
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('idempotency_keys'), true)}`,
	values: [input.limit, input.after ?? null],
});

/**
 * The succeeded records of a held run's keys (`requests`: scope, key, fingerprint of each): the same
 * request is answered from its saved response; a different one under a key still within its
 * retention is a conflict (past it, a claim would start a new operation, so it is held).
 */
export const succeededKeysSql = (
	store: Store,
	input: { requests: Array<{ scope: string; key: string; fingerprint: string }> },
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, fingerprint text)
)
SELECT k.scope, k.key, k.attempts, k.response_status, k.response_headers, k.response_body, k.response_truncated,
	i.fingerprint AS asked, k.fingerprint = i.fingerprint AS same_request
FROM ${store.table('idempotency_keys')} k JOIN input i ON i.scope = k.scope AND i.key = k.key
WHERE k.status = 'succeeded' AND (k.fingerprint = i.fingerprint OR k.expires_at >= now())`,
	values: [JSON.stringify(input.requests)],
});

/**
 * The steps that took effect before an item was parked: succeeded records of the same workflow
 * and item (`items`: ord, workflow_id, item_ref, scope, key of each parked item), other than the
 * parked key itself, oldest first.
 */
export const stepsOfItemsSql = (
	store: Store,
	input: {
		items: Array<{
			ord: number;
			workflow_id: string | null;
			item_ref: string;
			scope: string;
			key: string;
		}>;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(ord int, workflow_id text, item_ref text, scope text, key text)
)
SELECT i.ord, k.scope, k.key, k.node, k.completed_at, k.response_status, k.response_body, k.compensation
FROM input i JOIN ${store.table('idempotency_keys')} k
  ON k.workflow_id = i.workflow_id AND k.item_ref = i.item_ref AND k.status = 'succeeded'
 AND NOT (k.scope = i.scope AND k.key = i.key)
ORDER BY i.ord, k.completed_at, k.key`,
	values: [JSON.stringify(input.items)],
});

/**
 * Fences a step's record for its reversal (`actor`: who compensates, `deadLetterId`), right
 * before each compensating request is sent: a succeeded record still within its retention moves
 * to compensated, so no run that starts from then on reads it as done; one this letter's
 * Compensate already fenced stays (a second press, a retry). Anything else (another letter's,
 * claimed again after its retention, gone) returns no row, and the reversal is not sent.
 */
export const compensateKeySql = (
	store: Store,
	input: { scope: string; key: string; actor: string; deadLetterId: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('idempotency_keys')}
SET status = 'compensated', compensated_at = coalesce(compensated_at, now()),
    compensated_by = coalesce(compensated_by, $3), compensated_for = $4, updated_at = now(),
    history = CASE WHEN status = 'compensated' THEN history ELSE history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'compensated', 'actor', $3::text, 'deadLetter', $4::text)) END
WHERE scope = $1 AND key = $2
  AND ((status = 'succeeded' AND expires_at > now()) OR (status = 'compensated' AND compensated_for = $4))
RETURNING status`,
	values: [input.scope, input.key, input.actor, input.deadLetterId],
});

/**
 * Gives a step's record back its success when the reversal this dead letter (`deadLetterId`)
 * fenced it for certainly did nothing: the reversal's own record (`reversalKey`, in the step's
 * scope) is failed and none of its attempts could have taken effect (no lost answer, no 5xx or
 * 408, which a target may send after it committed; a reversal is retried with its key, and a failed record alone does
 * not say the target ignored every attempt). The record is read under a lock, so a second press
 * claiming it meanwhile (to send again, fencing the step again first) is waited for and seen. A
 * reversal that may have taken effect leaves the step compensated: a later run is refused until
 * a person has checked the target.
 */
export const uncompensateKeySql = (
	store: Store,
	input: { scope: string; key: string; deadLetterId: string; reversalKey: string },
): SqlQuery => ({
	text: `
WITH reversal AS (
	SELECT 1 FROM ${store.table('idempotency_keys')} r
	WHERE r.scope = $1 AND r.key = $4 AND r.status = 'failed'
	  AND NOT EXISTS (
		SELECT 1 FROM jsonb_array_elements(r.history) h
		WHERE h->>'kind' = 'lost'
		   OR (h->>'kind' = 'response' AND (coalesce((h->>'status')::int, 0) NOT BETWEEN 100 AND 499 OR h->>'status' = '408')))
	FOR UPDATE OF r
)
UPDATE ${store.table('idempotency_keys')}
SET status = 'succeeded', compensated_at = NULL, compensated_by = NULL, compensated_for = NULL, updated_at = now(),
    history = history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'compensation_failed', 'deadLetter', $3::text))
WHERE scope = $1 AND key = $2 AND status = 'compensated' AND compensated_for = $3
  AND EXISTS (SELECT 1 FROM reversal)
RETURNING status`,
	values: [input.scope, input.key, input.deadLetterId, input.reversalKey],
});

/** The status of one key record. */
export const keyStatusSql = (store: Store, input: { scope: string; key: string }): SqlQuery => ({
	text: `
SELECT status FROM ${store.table('idempotency_keys')} WHERE scope = $1 AND key = $2`,
	values: [input.scope, input.key],
});

/**
 * Moves the records of scope `from` to scope `to` (the node's scope once followed its name, now
 * its ID), but for keys that already have a record under `to`: those keep theirs.
 */
export const adoptScopeSql = (store: Store, input: { from: string; to: string }): SqlQuery => ({
	text: `
UPDATE ${store.table('idempotency_keys')} k SET scope = $2, updated_at = now()
WHERE k.scope = $1
  AND NOT EXISTS (SELECT 1 FROM ${store.table('idempotency_keys')} n WHERE n.scope = $2 AND n.key = k.key)`,
	values: [input.from, input.to],
});
