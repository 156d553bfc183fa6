import type { SqlQuery, Store } from '../../store';
import { lockedInKeyOrder } from './locks';

/**
 * Claims a run's keys in one statement. A key is claimed when it has no record, when its record
 * failed definitely (nothing happened at the target: claim again, possibly with a new
 * fingerprint, the fix-and-replay path), or when it succeeded or was compensated and is past
 * retention. A record in progress or unknown is never claimed here, expired or not: it is reported as it stands, so
 * the caller can replay, wait, reconcile or refuse.
 *
 * Timeline of two workers on one key:
 *   A: INSERT -> claimed, in_progress, generation 1   B: INSERT -> conflict, row not returned
 *   A: attempt start (generation 1) -> sends          B: reads the row: in_progress, lease live -> polls
 *   A: settle (generation 1) -> succeeded + response  B: poll sees succeeded -> returns the saved response
 *
 * The gate rides in the same statement (`integration`, and `pauseName`, its pause name; both null
 * for none): while the integration is paused or its breaker open nothing is claimed, and every row
 * says why, so the run holds its items without a round trip of its own. Read in the claim's
 * snapshot, a pause that commits before the claim holds the whole run; one that commits after
 * finds the keys claimed, as it would a run that had started. `breaker_holds` says whether items
 * the breaker held wait for release (only then is the release statement run).
 *
 * A key marked `start` (an item the run sends at once) is claimed with its first attempt started,
 * as the attempt-start statement would: counted, timed and under a lease over the attempt. Its
 * owner then sends without another statement, so a single-event write costs a claim and a settle.
 * The price: an owner that dies between this claim and its send leaves a record that reads as
 * possibly sent (unknown, reconciled by lookup, resend with the key, or a person) rather than
 * failed, as one that dies between an attempt start and its send always did.
 */
export const claimKeysSql = (
	store: Store,
	input: {
		keys: Array<{
			ord: number;
			scope: string;
			key: string;
			fingerprint: string;
			lease_ms: number;
			timeout_ms: number;
			start?: boolean;
			business_id?: string | null;
		}>;
		workflowId: string | null;
		executionId: string;
		node: string;
		retentionDays: number;
		integration: string | null;
		pauseName: string | null;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(ord int, scope text, key text, fingerprint text, lease_ms int, timeout_ms int, start boolean, business_id text)
), gate AS (
	SELECT p.changed_by AS paused_by, p.reason AS pause_reason, p.name IS NOT NULL AS paused,
		(SELECT b.open_until FROM ${store.table('breakers')} b WHERE b.integration = $6 AND b.open_until > now()) AS open_until,
		$6::text IS NOT NULL AND EXISTS (
			SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.status = 'held' AND d.hold_reason = 'breaker' AND d.integration = $6
		) AS breaker_holds,
		dr.expires_at AS drill_until, CASE WHEN dr.timeout_armed AND dr.armed_until > now() THEN dr.armed_for END AS drill_armed_for
	FROM (SELECT 1) AS one
	LEFT JOIN ${store.table('pauses')} p ON p.scope = 'integration' AND p.name = $7 AND p.paused
	LEFT JOIN ${store.table('drills')} dr ON dr.integration = $6 AND dr.expires_at > now()
), claimed AS (
	INSERT INTO ${store.table('idempotency_keys')} AS k
		(scope, key, fingerprint, status, lease_until, workflow_id, execution_id, node, expires_at, attempt_timeout_ms,
		 attempts, attempt_started_at, business_id)
	SELECT scope, key, fingerprint, 'in_progress', now() + make_interval(secs => lease_ms / 1000.0), $2, $3, $4,
	       now() + make_interval(days => $5), timeout_ms,
	       CASE WHEN start THEN 1 ELSE 0 END, CASE WHEN start THEN now() END, business_id
	-- Rows are locked in key order, the same in every statement, so overlapping batches never deadlock.
	FROM input, gate WHERE NOT gate.paused AND gate.open_until IS NULL ORDER BY scope, key
	ON CONFLICT (scope, key) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, status = 'in_progress', lease_until = EXCLUDED.lease_until,
		generation = k.generation + 1, workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id,
		node = EXCLUDED.node, attempts = EXCLUDED.attempts, attempt_started_at = EXCLUDED.attempt_started_at,
		attempt_timeout_ms = EXCLUDED.attempt_timeout_ms,
		response_status = NULL, response_headers = NULL, response_body = NULL, response_truncated = false,
		last_error = NULL, updated_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at,
		compensated_at = NULL, compensated_by = NULL, compensated_for = NULL,
		business_id = coalesce(EXCLUDED.business_id, k.business_id)
	WHERE k.status = 'failed' OR (k.status IN ('succeeded', 'compensated') AND k.expires_at < now())
	RETURNING k.scope, k.key, k.generation
)
SELECT i.ord, c.key IS NOT NULL AS claimed, coalesce(c.generation, e.generation) AS generation,
       CASE WHEN c.key IS NOT NULL THEN 'in_progress' ELSE e.status END AS status,
       CASE WHEN c.key IS NOT NULL THEN i.fingerprint ELSE e.fingerprint END AS fingerprint,
       (e.lease_until < now()) AS lease_expired, e.response_status, e.response_headers, e.response_body,
       e.response_truncated, e.attempts, e.execution_id, e.compensated_at, e.compensated_by, e.compensated_for,
       extract(epoch FROM (e.attempt_started_at + make_interval(secs => coalesce(e.attempt_timeout_ms, 0) / 1000.0)) - now()) * 1000 AS in_flight_ms,
       g.paused, g.paused_by, g.pause_reason, g.open_until, g.breaker_holds, g.drill_until, g.drill_armed_for
FROM input i
CROSS JOIN gate g
LEFT JOIN claimed c ON c.scope = i.scope AND c.key = i.key
LEFT JOIN ${store.table('idempotency_keys')} e ON e.scope = i.scope AND e.key = i.key`,
	values: [
		JSON.stringify(input.keys),
		input.workflowId,
		input.executionId,
		input.node,
		input.retentionDays,
		input.integration,
		input.pauseName,
	],
});

/** One record as it stands, in the shape the claim returns. */
export const readKeySql = (store: Store, input: { scope: string; key: string }): SqlQuery => ({
	text: `
SELECT status, generation, fingerprint, (lease_until < now()) AS lease_expired, response_status, response_headers,
       response_body, response_truncated, attempts, execution_id, compensated_at, compensated_by, compensated_for,
       extract(epoch FROM (attempt_started_at + make_interval(secs => coalesce(attempt_timeout_ms, 0) / 1000.0)) - now()) * 1000 AS in_flight_ms
FROM ${store.table('idempotency_keys')} WHERE scope = $1 AND key = $2`,
	values: [input.scope, input.key],
});

/**
 * Takes over a record whose outcome is unknown (a lost response, an owner that ended without a
 * settle), conditional on the generation the taker saw: of two takers, one wins.
 */
export const takeOverSql = (
	store: Store,
	input: {
		scope: string;
		key: string;
		generation: number | string | null;
		executionId: string;
		leaseMs: number;
		workflowId: string | null;
		node: string;
	},
): SqlQuery => ({
	text: `
UPDATE ${store.table('idempotency_keys')}
SET status = 'in_progress', generation = generation + 1, lease_until = now() + make_interval(secs => $5 / 1000.0),
    execution_id = $4, workflow_id = $6, node = $7, updated_at = now()
WHERE scope = $1 AND key = $2 AND generation = $3 AND status = 'unknown'
RETURNING generation`,
	values: [
		input.scope,
		input.key,
		input.generation,
		input.executionId,
		input.leaseMs,
		input.workflowId,
		input.node,
	],
});

/**
 * Starts one attempt of each given record, if its owner still holds it: counts the attempt,
 * notes when it started and how long it may take, and stretches the lease over it. Records not
 * returned were taken over (or settled) meanwhile: their owner must not send.
 */
export const startAttemptsSql = (
	store: Store,
	input: {
		records: Array<{
			scope: string;
			key: string;
			generation: number;
			lease_ms: number;
			timeout_ms: number;
		}>;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, lease_ms int, timeout_ms int)
), ${lockedInKeyOrder(store)}
UPDATE ${store.table('idempotency_keys')} k
SET attempts = k.attempts + 1, attempt_started_at = now(), attempt_timeout_ms = input.timeout_ms,
    lease_until = now() + make_interval(secs => input.lease_ms / 1000.0), updated_at = now()
FROM input JOIN locked USING (scope, key)
WHERE k.scope = input.scope AND k.key = input.key AND k.generation = input.generation AND k.status = 'in_progress'
RETURNING k.scope, k.key`,
	values: [JSON.stringify(input.records)],
});

/** Renews the leases of every record a run still holds, in one statement; the same fence. */
export const renewLeasesSql = (
	store: Store,
	input: { records: Array<{ scope: string; key: string; generation: number; lease_ms: number }> },
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, lease_ms int)
), ${lockedInKeyOrder(store)}
UPDATE ${store.table('idempotency_keys')} k
SET lease_until = greatest(k.lease_until, now() + make_interval(secs => input.lease_ms / 1000.0))
FROM input JOIN locked USING (scope, key)
WHERE k.scope = input.scope AND k.key = input.key AND k.generation = input.generation AND k.status = 'in_progress'
RETURNING k.scope, k.key`,
	values: [JSON.stringify(input.records)],
});
