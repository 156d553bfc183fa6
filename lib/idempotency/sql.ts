import type { Store } from '../store';

/**
 * The SQL of the idempotency record, one named builder per statement. Every value is bound;
 * the only identifier spliced in is the validated, quoted schema name.
 */

/**
 * Claims a run's keys in one statement. A key is claimed when it has no record, when its
 * record failed definitely (nothing happened at the target: claim again, possibly with a new
 * fingerprint, the fix-and-replay path), or when it is past retention. Every other record is
 * reported as it stands, so the caller can replay, wait, reconcile or refuse.
 *
 * Timeline of two workers on one key:
 *   A: INSERT -> claimed, in_progress (lease)        B: INSERT -> conflict, row not returned
 *   A: sends, target commits                         B: reads the row: in_progress, lease live -> polls
 *   A: completes -> succeeded + saved response       B: poll sees succeeded -> returns the saved response
 */
export const claimKeysSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(ord int, scope text, key text, fingerprint text)
), claimed AS (
	INSERT INTO ${store.table('idempotency_keys')} AS k (scope, key, fingerprint, status, lease_until, workflow_id, execution_id, node, expires_at)
	SELECT scope, key, fingerprint, 'in_progress', now() + make_interval(secs => $2), $3, $4, $5, now() + make_interval(days => $6)
	FROM input ORDER BY ord
	ON CONFLICT (scope, key) DO UPDATE SET
		fingerprint = EXCLUDED.fingerprint, status = 'in_progress', lease_until = EXCLUDED.lease_until,
		workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id, node = EXCLUDED.node,
		attempts = 0, response_status = NULL, response_headers = NULL, response_body = NULL, response_truncated = false,
		last_error = NULL, updated_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at
	WHERE k.status = 'failed' OR k.expires_at < now()
	RETURNING k.scope, k.key
)
SELECT i.ord, c.key IS NOT NULL AS claimed, e.status, e.fingerprint, (e.lease_until < now()) AS lease_expired,
       e.response_status, e.response_headers, e.response_body, e.response_truncated, e.attempts, e.execution_id
FROM input i
LEFT JOIN claimed c ON c.scope = i.scope AND c.key = i.key
LEFT JOIN ${store.table('idempotency_keys')} e ON e.scope = i.scope AND e.key = i.key`;

/** Takes over a record whose lease expired (a worker died mid-call); only one taker wins. */
export const takeOverSql = (store: Store): string => `
UPDATE ${store.table('idempotency_keys')}
SET lease_until = now() + make_interval(secs => $4), execution_id = $5, fingerprint = $3, updated_at = now()
WHERE scope = $1 AND key = $2 AND status = 'in_progress' AND lease_until < now()
RETURNING key`;

export const readKeySql = (store: Store): string => `
SELECT status, fingerprint, (lease_until < now()) AS lease_expired, response_status, response_headers, response_body, response_truncated, attempts
FROM ${store.table('idempotency_keys')} WHERE scope = $1 AND key = $2`;

/** Records the run's outcomes in one statement: succeeded with the saved response, failed, or unknown. */
export const settleKeysSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, outcome text, attempts int,
		response_status int, response_headers json, response_body text, response_truncated boolean, last_error text)
)
UPDATE ${store.table('idempotency_keys')} k SET
	status = CASE input.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' ELSE 'in_progress' END,
	-- Unknown: the lease ends now, so the next claim reconciles instead of resending blindly.
	lease_until = now(),
	attempts = input.attempts,
	response_status = input.response_status,
	response_headers = input.response_headers,
	response_body = input.response_body,
	response_truncated = coalesce(input.response_truncated, false),
	last_error = input.last_error,
	completed_at = CASE WHEN input.outcome = 'succeeded' THEN now() END,
	updated_at = now()
FROM input
WHERE k.scope = input.scope AND k.key = input.key AND k.execution_id = $2`;

export const purgeKeysSql = (store: Store): string => `
WITH doomed AS (SELECT scope, key FROM ${store.table('idempotency_keys')} WHERE expires_at < now() AND status <> 'in_progress' LIMIT $1)
DELETE FROM ${store.table('idempotency_keys')} k USING doomed d WHERE k.scope = d.scope AND k.key = d.key`;

/** Breakers: one row per integration; a failure streak opens it for a cool-down, a success closes it. */
export const recordBreakerSql = (store: Store): string => `
INSERT INTO ${store.table('breakers')} AS b (integration, consecutive_failures, open_until, updated_at)
VALUES ($1, CASE WHEN $2 THEN 0 ELSE $3::int END, CASE WHEN NOT $2 AND $3::int >= $4 THEN now() + make_interval(secs => $5) END, now())
ON CONFLICT (integration) DO UPDATE SET
	consecutive_failures = CASE WHEN $2 THEN 0 ELSE b.consecutive_failures + $3::int END,
	open_until = CASE
		WHEN $2 THEN NULL
		WHEN b.consecutive_failures + $3::int >= $4 THEN now() + make_interval(secs => $5)
		ELSE b.open_until END,
	updated_at = now()
RETURNING open_until`;

export const breakerOpenSql = (store: Store): string => `
SELECT open_until FROM ${store.table('breakers')} WHERE integration = $1 AND open_until > now()`;
