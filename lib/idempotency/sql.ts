import type { Store } from '../store';

/**
 * The SQL of the idempotency record, one named builder per statement. Every value is bound;
 * the only identifier spliced in is the validated, quoted schema name.
 *
 * Ownership is fenced: a claim or takeover gives its owner a generation, and every later
 * statement of that owner (attempt start, lease renewal, settle) is conditional on it, so an
 * owner that was superseded while it was slow changes nothing and learns so.
 */

/**
 * A CTE that locks the records named by `input` in key order. Every statement that changes
 * several records locks them through it (or inserts in the same order), so two batches that
 * overlap wait for each other instead of deadlocking.
 */
const lockedInKeyOrder = (store: Store): string => `locked AS (
	SELECT k.scope, k.key FROM ${store.table('idempotency_keys')} k JOIN input i ON i.scope = k.scope AND i.key = k.key
	ORDER BY k.scope, k.key
	FOR UPDATE OF k
)`;

/**
 * Claims a run's keys in one statement. A key is claimed when it has no record, when its record
 * failed definitely (nothing happened at the target: claim again, possibly with a new
 * fingerprint, the fix-and-replay path), or when it succeeded and is past retention. A record
 * in progress or unknown is never claimed here, expired or not: it is reported as it stands, so
 * the caller can replay, wait, reconcile or refuse.
 *
 * Timeline of two workers on one key:
 *   A: INSERT -> claimed, in_progress, generation 1   B: INSERT -> conflict, row not returned
 *   A: attempt start (generation 1) -> sends          B: reads the row: in_progress, lease live -> polls
 *   A: settle (generation 1) -> succeeded + response  B: poll sees succeeded -> returns the saved response
 *
 * The gate rides in the same statement ($6: the integration, $7: its pause name; both null for
 * none): while the integration is paused or its breaker open nothing is claimed, and every row
 * says why, so the run holds its items without a round trip of its own. Read in the claim's
 * snapshot, a pause that commits before the claim holds the whole run; one that commits after
 * finds the keys claimed, as it would a run that had started. `breaker_holds` says whether items
 * the breaker held wait for release (only then is the release statement run).
 */
export const claimKeysSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(ord int, scope text, key text, fingerprint text, lease_ms int, timeout_ms int)
), gate AS (
	SELECT p.changed_by AS paused_by, p.reason AS pause_reason, p.name IS NOT NULL AS paused,
		(SELECT b.open_until FROM ${store.table('breakers')} b WHERE b.integration = $6 AND b.open_until > now()) AS open_until,
		$6::text IS NOT NULL AND EXISTS (
			SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.status = 'held' AND d.hold_reason = 'breaker' AND d.integration = $6
		) AS breaker_holds
	FROM (SELECT 1) AS one
	LEFT JOIN ${store.table('pauses')} p ON p.scope = 'integration' AND p.name = $7 AND p.paused
), claimed AS (
	INSERT INTO ${store.table('idempotency_keys')} AS k
		(scope, key, fingerprint, status, lease_until, workflow_id, execution_id, node, expires_at, attempt_timeout_ms)
	SELECT scope, key, fingerprint, 'in_progress', now() + make_interval(secs => lease_ms / 1000.0), $2, $3, $4,
	       now() + make_interval(days => $5), timeout_ms
	-- Rows are locked in key order, the same in every statement, so overlapping batches never deadlock.
	FROM input, gate WHERE NOT gate.paused AND gate.open_until IS NULL ORDER BY scope, key
	ON CONFLICT (scope, key) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, status = 'in_progress', lease_until = EXCLUDED.lease_until,
		generation = k.generation + 1, workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id,
		node = EXCLUDED.node, attempts = 0, attempt_started_at = NULL, attempt_timeout_ms = EXCLUDED.attempt_timeout_ms,
		response_status = NULL, response_headers = NULL, response_body = NULL, response_truncated = false,
		last_error = NULL, updated_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at
	WHERE k.status = 'failed' OR (k.status = 'succeeded' AND k.expires_at < now())
	RETURNING k.scope, k.key, k.generation
)
SELECT i.ord, c.key IS NOT NULL AS claimed, coalesce(c.generation, e.generation) AS generation,
       CASE WHEN c.key IS NOT NULL THEN 'in_progress' ELSE e.status END AS status,
       CASE WHEN c.key IS NOT NULL THEN i.fingerprint ELSE e.fingerprint END AS fingerprint,
       (e.lease_until < now()) AS lease_expired, e.response_status, e.response_headers, e.response_body,
       e.response_truncated, e.attempts, e.execution_id,
       extract(epoch FROM (e.attempt_started_at + make_interval(secs => coalesce(e.attempt_timeout_ms, 0) / 1000.0)) - now()) * 1000 AS in_flight_ms,
       g.paused, g.paused_by, g.pause_reason, g.open_until, g.breaker_holds
FROM input i
CROSS JOIN gate g
LEFT JOIN claimed c ON c.scope = i.scope AND c.key = i.key
LEFT JOIN ${store.table('idempotency_keys')} e ON e.scope = i.scope AND e.key = i.key`;

/** One record as it stands, in the shape the claim returns. */
export const readKeySql = (store: Store): string => `
SELECT status, generation, fingerprint, (lease_until < now()) AS lease_expired, response_status, response_headers,
       response_body, response_truncated, attempts, execution_id,
       extract(epoch FROM (attempt_started_at + make_interval(secs => coalesce(attempt_timeout_ms, 0) / 1000.0)) - now()) * 1000 AS in_flight_ms
FROM ${store.table('idempotency_keys')} WHERE scope = $1 AND key = $2`;

/**
 * Takes over a record whose outcome is unknown (a lost response, an owner that ended without a
 * settle), conditional on the generation the taker saw: of two takers, one wins.
 */
export const takeOverSql = (store: Store): string => `
UPDATE ${store.table('idempotency_keys')}
SET status = 'in_progress', generation = generation + 1, lease_until = now() + make_interval(secs => $5 / 1000.0),
    execution_id = $4, workflow_id = $6, node = $7, updated_at = now()
WHERE scope = $1 AND key = $2 AND generation = $3 AND status = 'unknown'
RETURNING generation`;

/**
 * Starts one attempt of each given record, if its owner still holds it: counts the attempt,
 * notes when it started and how long it may take, and stretches the lease over it. Records not
 * returned were taken over (or settled) meanwhile: their owner must not send.
 */
export const startAttemptsSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, lease_ms int, timeout_ms int)
), ${lockedInKeyOrder(store)}
UPDATE ${store.table('idempotency_keys')} k
SET attempts = k.attempts + 1, attempt_started_at = now(), attempt_timeout_ms = input.timeout_ms,
    lease_until = now() + make_interval(secs => input.lease_ms / 1000.0), updated_at = now()
FROM input JOIN locked USING (scope, key)
WHERE k.scope = input.scope AND k.key = input.key AND k.generation = input.generation AND k.status = 'in_progress'
RETURNING k.scope, k.key`;

/** Renews the leases of every record a run still holds, in one statement; the same fence. */
export const renewLeasesSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, lease_ms int)
), ${lockedInKeyOrder(store)}
UPDATE ${store.table('idempotency_keys')} k
SET lease_until = greatest(k.lease_until, now() + make_interval(secs => input.lease_ms / 1000.0))
FROM input JOIN locked USING (scope, key)
WHERE k.scope = input.scope AND k.key = input.key AND k.generation = input.generation AND k.status = 'in_progress'
RETURNING k.scope, k.key`;

/**
 * Records outcomes in one statement. A record is settled when its owner still holds it
 * (same generation, in progress), or when a superseded owner proves an unknown record's effect
 * exists (a success with the same request). Every other outcome is kept as an observation in
 * the record's history and reported back, never dropped silently. The history keeps the last
 * 50 entries.
 *
 * A record settled as succeeded closes, in the same statement, the open dead letters an earlier
 * delivery of its key left at this step ($3 workflow, $4 step) as replayed, each with its audit
 * event (actor $5, reason $6): the rules of closeSucceededSql, with the key row held locked by
 * this statement's own settle, so no renewal of the key can come between the two. The letters
 * are locked in the park's order (workflow, step, item key), so a settle and a park of the same
 * keys never wait on each other in a circle.
 *
 * A success also ends the streak of the integration's circuit breaker ($7, null without one),
 * as it happens rather than when the run ends: the row is written only when it has a streak or
 * is open, so the healthy path costs the breaker no statement.
 */
export const settleKeysSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, fingerprint text,
		outcome text, response_status int, response_headers json, response_body text, response_truncated boolean,
		last_error text, history jsonb, item_ref text, compensation jsonb)
), ${lockedInKeyOrder(store)}, settled AS (
	UPDATE ${store.table('idempotency_keys')} k SET
		status = CASE input.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' ELSE 'unknown' END,
		lease_until = now(),
		response_status = input.response_status,
		response_headers = input.response_headers,
		response_body = input.response_body,
		response_truncated = coalesce(input.response_truncated, false),
		last_error = input.last_error,
		item_ref = input.item_ref,
		compensation = input.compensation,
		completed_at = CASE WHEN input.outcome = 'succeeded' THEN now() END,
		expires_at = greatest(k.expires_at, now() + make_interval(days => $2)),
		updated_at = now(),
		history = (SELECT coalesce(jsonb_agg(h.e ORDER BY h.i), '[]') FROM jsonb_array_elements(k.history || coalesce(input.history, '[]')) WITH ORDINALITY AS h(e, i)
		           WHERE h.i > jsonb_array_length(k.history || coalesce(input.history, '[]')) - 50)
	FROM input JOIN locked USING (scope, key)
	WHERE k.scope = input.scope AND k.key = input.key
	  AND ((k.generation = input.generation AND k.status = 'in_progress')
	       OR (input.outcome = 'succeeded' AND k.status = 'unknown' AND k.fingerprint = input.fingerprint))
	RETURNING k.scope, k.key
), observed AS (
	UPDATE ${store.table('idempotency_keys')} k SET
		history = (SELECT coalesce(jsonb_agg(h.e ORDER BY h.i), '[]') FROM jsonb_array_elements(k.history || coalesce(input.history, '[]')) WITH ORDINALITY AS h(e, i)
		           WHERE h.i > jsonb_array_length(k.history || coalesce(input.history, '[]')) - 50)
	FROM input JOIN locked USING (scope, key)
	WHERE k.scope = input.scope AND k.key = input.key
	  AND NOT EXISTS (SELECT 1 FROM settled s WHERE s.scope = input.scope AND s.key = input.key)
	RETURNING k.scope, k.key, k.execution_id
), closing AS (
	SELECT d.id, d.status FROM ${store.table('dead_letters')} d
	WHERE d.idempotency_key IN (SELECT s.key FROM settled s JOIN input USING (scope, key) WHERE input.outcome = 'succeeded')
	  AND d.workflow_id = $3 AND d.step = $4 AND d.status IN ('new', 'held') AND d.error_class <> 'conflict'
	ORDER BY d.workflow_id, d.step, d.item_key FOR UPDATE
), closed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'replayed', updated_at = now(), generation = d.generation + 1, taken_by = NULL,
	    hold_reason = NULL, closed_at = now()
	FROM closing c WHERE d.id = c.id
	RETURNING d.id, c.status AS from_status
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $5, from_status, 'replayed', $6 FROM closed
), streak_ended AS (
	UPDATE ${store.table('breakers')} b SET consecutive_failures = 0, open_until = NULL, updated_at = now()
	WHERE b.integration = $7 AND (b.consecutive_failures > 0 OR b.open_until IS NOT NULL)
	  AND EXISTS (SELECT 1 FROM settled s JOIN input USING (scope, key) WHERE input.outcome = 'succeeded')
)
SELECT scope, key, true AS settled, NULL AS owner FROM settled
UNION ALL
SELECT scope, key, false, execution_id FROM observed`;

/**
 * Ends the record of an owner that is gone (its lease ended without a settle), conditional on
 * the generation the caller saw: failed when it never started an attempt (nothing was sent, so
 * the key is claimable again, also with another request), unknown when it had.
 */
export const abandonKeySql = (store: Store): string => `
UPDATE ${store.table('idempotency_keys')}
SET status = CASE WHEN attempts = 0 THEN 'failed' ELSE 'unknown' END, lease_until = now(), updated_at = now(),
    last_error = coalesce(last_error, 'its owner (execution ' || coalesce(execution_id, '?') || ') ended without settling it'),
    history = history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'abandoned', 'execution', execution_id))
WHERE scope = $1 AND key = $2 AND generation = $3 AND status = 'in_progress' AND lease_until < now()
RETURNING status`;

/**
 * The same for every open record of an execution known to be dead (its execution crashed), at
 * once instead of after its leases end.
 */
export const abandonExecutionKeysSql = (store: Store): string => `
UPDATE ${store.table('idempotency_keys')}
SET status = CASE WHEN attempts = 0 THEN 'failed' ELSE 'unknown' END, lease_until = now(), updated_at = now(),
    last_error = coalesce(last_error, 'its owner (execution ' || coalesce(execution_id, '?') || ') ended without settling it'),
    history = history || jsonb_build_array(jsonb_build_object('at', now(), 'kind', 'abandoned', 'execution', execution_id))
WHERE execution_id = $1 AND status = 'in_progress'
RETURNING scope, key, status`;

/**
 * Deletes settled records past retention, one slice of $1. Records in progress or with an
 * unknown outcome are never purged: they are the only trace of a write that may have happened.
 * SKIP LOCKED: a record a write holds is left for the next purge rather than waited on.
 */
export const purgeKeysSql = (store: Store): string => `
WITH doomed AS (
	SELECT scope, key FROM ${store.table('idempotency_keys')}
	WHERE expires_at < now() AND status IN ('succeeded', 'failed')
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table('idempotency_keys')} k USING doomed d WHERE k.scope = d.scope AND k.key = d.key`;

/**
 * The succeeded records of a held run's keys ($1: scope, key, fingerprint of each): the same
 * request is answered from its saved response; a different one under a key still within its
 * retention is a conflict (past it, a claim would start a new operation, so it is held).
 */
export const succeededKeysSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, fingerprint text)
)
SELECT k.scope, k.key, k.attempts, k.response_status, k.response_headers, k.response_body, k.response_truncated,
	i.fingerprint AS asked, k.fingerprint = i.fingerprint AS same_request
FROM ${store.table('idempotency_keys')} k JOIN input i ON i.scope = k.scope AND i.key = k.key
WHERE k.status = 'succeeded' AND (k.fingerprint = i.fingerprint OR k.expires_at >= now())`;

/**
 * The steps that took effect before an item was parked: succeeded records of the same workflow
 * and item ($1: ord, workflow_id, item_ref, scope, key of each parked item), other than the
 * parked key itself, oldest first.
 */
export const stepsOfItemsSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(ord int, workflow_id text, item_ref text, scope text, key text)
)
SELECT i.ord, k.scope, k.key, k.node, k.completed_at, k.response_status, k.response_body, k.compensation
FROM input i JOIN ${store.table('idempotency_keys')} k
  ON k.workflow_id = i.workflow_id AND k.item_ref = i.item_ref AND k.status = 'succeeded'
 AND NOT (k.scope = i.scope AND k.key = i.key)
ORDER BY i.ord, k.completed_at, k.key`;
