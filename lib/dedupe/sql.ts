import type { Store } from '../store';

/**
 * The SQL of Event Dedupe, one named builder per statement. Every value is bound; the only
 * identifier spliced in is the validated, quoted schema name.
 */

/**
 * Claims a batch of event IDs in one statement. A row is (re)claimed when absent, when its
 * lease expired without completion, or when it is past retention and not yet purged. Rows the
 * statement did not return were held by someone else: the outer join reads why from the
 * snapshot (a row claimed concurrently, invisible to the snapshot, reads as in progress).
 */
export const claimEventsSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::numeric[]) AS t(event_id, entity_key, version)
), claimed AS (
	INSERT INTO ${store.table('processed_events')} AS p
		(consumer, event_id, status, workflow_id, execution_id, claimed_at, lease_until, completed_at, expires_at, entity_key, version)
	SELECT $1, event_id, $5, $6, $7, now(), now() + make_interval(secs => $8),
	       CASE WHEN $5 = 'done' THEN now() END, now() + make_interval(days => $9), entity_key, version
	FROM input
	ON CONFLICT (consumer, event_id) DO UPDATE SET
		status = EXCLUDED.status, workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id,
		claimed_at = now(), lease_until = EXCLUDED.lease_until, completed_at = EXCLUDED.completed_at,
		expires_at = EXCLUDED.expires_at, entity_key = EXCLUDED.entity_key, version = EXCLUDED.version
	WHERE (p.status = 'in_progress' AND p.lease_until < now()) OR p.expires_at < now()
	RETURNING p.event_id
)
SELECT i.event_id,
       c.event_id IS NOT NULL AS claimed,
       existing.status AS existing_status,
       existing.execution_id AS claimed_by
FROM input i
LEFT JOIN claimed c ON c.event_id = i.event_id
LEFT JOIN ${store.table('processed_events')} existing ON existing.consumer = $1 AND existing.event_id = i.event_id`;

/**
 * Raises each entity's version to the claimed event's when it is newer, keeping the previous
 * value for Release. Returns the entities whose version moved; the rest are stale or equal.
 */
export const advanceVersionsSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM unnest($2::text[], $3::numeric[], $4::text[]) AS t(entity_key, version, event_id)
), advanced AS (
	INSERT INTO ${store.table('entity_versions')} AS v (consumer, entity_key, version, previous_version, event_id, execution_id)
	SELECT $1, entity_key, version, NULL, event_id, $5 FROM input
	ON CONFLICT (consumer, entity_key) DO UPDATE SET
		previous_version = v.version, version = EXCLUDED.version, event_id = EXCLUDED.event_id,
		execution_id = EXCLUDED.execution_id, updated_at = now()
	WHERE EXCLUDED.version > v.version
	RETURNING v.entity_key
)
SELECT i.entity_key, a.entity_key IS NOT NULL AS advanced, current.version AS current_version
FROM input i
LEFT JOIN advanced a ON a.entity_key = i.entity_key
LEFT JOIN ${store.table('entity_versions')} current ON current.consumer = $1 AND current.entity_key = i.entity_key`;

/** Undoes claims that ordering rejected in the same transaction, so they never count as processed. */
export const dropClaimsSql = (store: Store): string => `
DELETE FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = ANY($2::text[]) AND execution_id = $3`;

export const completeEventsSql = (store: Store): string => `
UPDATE ${store.table('processed_events')}
SET status = 'done', completed_at = now()
WHERE consumer = $1 AND event_id = ANY($2::text[]) AND status = 'in_progress'
RETURNING event_id`;

/** Marks every open claim of one execution done (the success path of lease mode). */
export const completeExecutionSql = (store: Store): string => `
UPDATE ${store.table('processed_events')}
SET status = 'done', completed_at = now()
WHERE execution_id = $1 AND status = 'in_progress'
RETURNING event_id`;

/**
 * Releases the claims an execution made (all consumers: the error workflow does not know
 * them), restoring entity versions it had advanced. Done claims are released too: in claim
 * mode "done at claim" a failed execution's claims are done from the start.
 */
export const releaseExecutionSql = (store: Store): string => `
WITH released AS (
	DELETE FROM ${store.table('processed_events')} WHERE execution_id = $1 RETURNING consumer, event_id
), restored AS (
	UPDATE ${store.table('entity_versions')} v
	SET version = v.previous_version, previous_version = NULL, execution_id = NULL, updated_at = now()
	FROM released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.execution_id = $1 AND v.previous_version IS NOT NULL
	RETURNING v.entity_key
), removed AS (
	DELETE FROM ${store.table('entity_versions')} v
	USING released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.execution_id = $1 AND v.previous_version IS NULL
	RETURNING v.entity_key
)
SELECT count(*)::int AS released FROM released`;

export const releaseEventsSql = (store: Store): string => `
WITH released AS (
	DELETE FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = ANY($2::text[]) RETURNING consumer, event_id, execution_id
), restored AS (
	UPDATE ${store.table('entity_versions')} v
	SET version = v.previous_version, previous_version = NULL, execution_id = NULL, updated_at = now()
	FROM released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.previous_version IS NOT NULL
	RETURNING v.entity_key
), removed AS (
	DELETE FROM ${store.table('entity_versions')} v
	USING released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.previous_version IS NULL
	RETURNING v.entity_key
)
SELECT event_id FROM released`;

/** Removes events past retention, in bounded slices so a large purge never holds long locks. */
export const purgeExpiredSql = (store: Store): string => `
WITH doomed AS (
	SELECT consumer, event_id FROM ${store.table('processed_events')}
	WHERE expires_at < now() AND ($1::text IS NULL OR consumer = $1)
	LIMIT $2
)
DELETE FROM ${store.table('processed_events')} p USING doomed d
WHERE p.consumer = d.consumer AND p.event_id = d.event_id`;
