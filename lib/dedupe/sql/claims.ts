import { afterSql, deleteDoomed, type SqlQuery, type Store } from '../../store';
import { keptItem } from './accounting';

/** A claim's life: claimed (and ordered by entity version), completed, released, purged. */

/**
 * Claims a batch of event IDs in one statement. A row is (re)claimed when absent, when its lease
 * expired without completion (a dead owner; not one whose execution waited: it may have finished
 * after its resume, and only Recover, asking n8n, settles it), when its execution failed (the
 * redelivery is the retry), when it is done and past retention, or when this
 * same execution made it (n8n running one execution again, as queue mode does with a stalled
 * job) and did not complete it. A claim in progress is never taken because it expired. Each
 * (re)claim increments the generation. Rows the statement did not return were held by someone
 * else: the outer join reads why from the snapshot (a row claimed concurrently, invisible to the
 * snapshot, reads as in progress).
 */
export const claimEventsSql = (
	store: Store,
	input: {
		consumer: string;
		eventIds: string[];
		entityKeys: Array<string | null>;
		versions: Array<string | null>;
		status: 'done' | 'in_progress';
		workflowId: string | null;
		executionId: string;
		leaseSeconds: number;
		retentionDays: number;
		payloads: Array<string | null>;
		payloadBytes: Array<number | null>;
		/**
		 * The executions that called this one as a sub-workflow, nearest first; the nearest that
		 * holds items is recorded when it holds exactly one (whose item this claim then is), or,
		 * when it is a recovery run, the re-run it called, linked to the item it re-runs.
		 */
		ancestors: string[];
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::numeric[], $10::json[], $11::int[])
		AS t(event_id, entity_key, version, payload, payload_bytes)
), callers AS (
	-- A sub-workflow's claim is the item of the nearest caller that holds items, when it holds
	-- exactly one: that item's letter (or its re-run) then stands for this one. A recovery run
	-- holds many, and re-runs them one at a time, each in an execution of its own (the caller
	-- nearer than the recovery run): the item that re-run is recorded for, else the one whose
	-- re-run the recovery run started last, is this one's, and the re-run becomes one of that
	-- item's runs (linked). Any other caller holding many (a batch) does not say which: the claim
	-- stands on its own.
	SELECT coalesce(c.ancestors, '{}'::text[]) AS ancestors, c.link_consumer, c.link_event_id, c.rerun
	FROM (SELECT 1) one LEFT JOIN LATERAL (
		SELECT CASE WHEN r.event_id IS NOT NULL THEN ARRAY[a.nearer]
		            WHEN a.held = 1 THEN ARRAY[a.id] ELSE '{}'::text[] END AS ancestors,
		       r.consumer AS link_consumer, r.event_id AS link_event_id, a.nearer AS rerun
		FROM (
			SELECT x.id, x.ord, lag(x.id) OVER (ORDER BY x.ord) AS nearer, (
				SELECT count(*) FROM ${store.table('processed_events')} q
				WHERE q.execution_id = x.id AND q.status = 'in_progress'
				  AND ${keptItem('q')}) AS held
			FROM unnest($12::text[]) WITH ORDINALITY AS x(id, ord)
		) a
		LEFT JOIN LATERAL (
			SELECT k.consumer, k.event_id FROM (
				SELECT q.consumer, q.event_id, 0 AS pref, NULL::timestamptz AS at
				FROM ${store.table('processed_events')} q
				WHERE a.nearer IS NOT NULL AND q.rerun_execution = a.nearer
				UNION ALL
				SELECT q.consumer, q.event_id, 1, q.rerun_at FROM ${store.table('processed_events')} q
				WHERE a.nearer IS NOT NULL AND q.execution_id = a.id AND q.status = 'in_progress'
				  AND q.rerun_at IS NOT NULL AND ${keptItem('q')}
			) k ORDER BY k.pref, k.at DESC LIMIT 1
		) r ON true
		WHERE a.held > 0 OR r.event_id IS NOT NULL
		ORDER BY a.ord LIMIT 1
	) c ON true
), linked AS (
	-- The re-run is a run of the item it re-runs: its letter, a redelivery's, Recover's next
	-- take, all find the sub-workflow's claim by it.
	UPDATE ${store.table('processed_events')} q
	SET previous_executions = CASE WHEN q.previous_executions @> ARRAY[c.rerun] THEN q.previous_executions
	        ELSE (q.previous_executions || c.rerun)[greatest(1, cardinality(q.previous_executions) - 14):] END,
	    rerun_execution = c.rerun
	FROM callers c
	WHERE c.link_consumer IS NOT NULL AND q.consumer = c.link_consumer AND q.event_id = c.link_event_id
	  AND NOT (q.consumer = $1 AND q.event_id = ANY($2::text[]))
	RETURNING q.event_id
), claimed AS (
	INSERT INTO ${store.table('processed_events')} AS p
		(consumer, event_id, status, workflow_id, execution_id, origin_execution_id, claimed_at, lease_until,
		 completed_at, completed_by, expires_at, entity_key, version, payload, payload_bytes, ancestors)
	SELECT $1, event_id, $5, $6, $7, $7, now(), now() + make_interval(secs => $8),
	       CASE WHEN $5 = 'done' THEN now() END, CASE WHEN $5 = 'done' THEN 'claim' END,
	       now() + make_interval(days => $9), entity_key, version, payload, payload_bytes,
	       (SELECT ancestors FROM callers)
	-- In ID order, the same in every statement, so overlapping batches never deadlock.
	FROM input ORDER BY event_id
	ON CONFLICT (consumer, event_id) DO UPDATE SET
		status = EXCLUDED.status, workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id,
		claimed_at = now(), lease_until = EXCLUDED.lease_until, completed_at = EXCLUDED.completed_at,
		completed_by = EXCLUDED.completed_by, expires_at = EXCLUDED.expires_at, entity_key = EXCLUDED.entity_key,
		version = EXCLUDED.version, generation = p.generation + 1, payload = EXCLUDED.payload,
		payload_bytes = EXCLUDED.payload_bytes, origin_execution_id = EXCLUDED.origin_execution_id,
		recover_attempts = 0, last_error = NULL, settled_as = NULL, failed_step = NULL,
		ancestors = EXCLUDED.ancestors, waiting_till = NULL, if_gone = NULL, rerun_at = NULL, rerun_execution = NULL,
		previous_executions = CASE WHEN p.execution_id IS DISTINCT FROM EXCLUDED.execution_id AND p.execution_id IS NOT NULL THEN (p.previous_executions || p.execution_id)[greatest(1, cardinality(p.previous_executions) - 14):] ELSE p.previous_executions END
	WHERE (p.status = 'in_progress' AND p.lease_until < now() AND p.waiting_till IS NULL)
	   OR p.status = 'failed'
	   OR (p.status = 'done' AND p.expires_at < now())
	   OR (p.execution_id = $7 AND p.completed_by IS DISTINCT FROM 'complete')
	RETURNING p.event_id
)
SELECT i.event_id,
       c.event_id IS NOT NULL AS claimed,
       existing.status AS existing_status,
       existing.execution_id AS claimed_by
FROM input i
LEFT JOIN claimed c ON c.event_id = i.event_id
LEFT JOIN ${store.table('processed_events')} existing ON existing.consumer = $1 AND existing.event_id = i.event_id`,
	values: [
		input.consumer,
		input.eventIds,
		input.entityKeys,
		input.versions,
		input.status,
		input.workflowId,
		input.executionId,
		input.leaseSeconds,
		input.retentionDays,
		input.payloads,
		input.payloadBytes,
		input.ancestors,
	],
});

/**
 * Raises each entity's version to the claimed event's when it is newer, keeping the previous
 * value for Release. Returns the entities whose version moved; the rest are stale or equal. An
 * event that meets the version it advanced itself (its earlier claim failed, and this is its
 * redelivery or replay) is its own retry, not a duplicate: it counts as advanced, and the
 * previous version stays what it was before that event.
 */
export const advanceVersionsSql = (
	store: Store,
	input: {
		consumer: string;
		entityKeys: string[];
		versions: string[];
		eventIds: string[];
		executionId: string;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM unnest($2::text[], $3::numeric[], $4::text[]) AS t(entity_key, version, event_id)
), advanced AS (
	INSERT INTO ${store.table('entity_versions')} AS v (consumer, entity_key, version, previous_version, event_id, execution_id)
	SELECT $1, entity_key, version, NULL, event_id, $5 FROM input ORDER BY entity_key
	ON CONFLICT (consumer, entity_key) DO UPDATE SET
		previous_version = CASE WHEN EXCLUDED.version > v.version THEN v.version ELSE v.previous_version END,
		version = EXCLUDED.version, event_id = EXCLUDED.event_id,
		execution_id = EXCLUDED.execution_id, updated_at = now()
	WHERE EXCLUDED.version > v.version OR (EXCLUDED.version = v.version AND EXCLUDED.event_id = v.event_id)
	RETURNING v.entity_key
)
SELECT i.entity_key, a.entity_key IS NOT NULL AS advanced, current.version AS current_version
FROM input i
LEFT JOIN advanced a ON a.entity_key = i.entity_key
LEFT JOIN ${store.table('entity_versions')} current ON current.consumer = $1 AND current.entity_key = i.entity_key`,
	values: [input.consumer, input.entityKeys, input.versions, input.eventIds, input.executionId],
});

/** Undoes claims that ordering rejected in the same transaction, so they never count as processed. */
export const dropClaimsSql = (
	store: Store,
	input: { consumer: string; eventIds: string[]; executionId: string },
): SqlQuery => ({
	text: `
DELETE FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = ANY($2::text[]) AND execution_id = $3`,
	values: [input.consumer, input.eventIds, input.executionId],
});

/**
 * Ordering rejected claims that took over an existing row (a redelivery of a failed or crashed
 * event, now older than its entity): the row keeps the item and ends done by that rule (`reason`
 * says why), rather than being deleted with the only copy of an item its earlier delivery kept.
 */
export const dropReclaimedSql = (
	store: Store,
	input: { consumer: string; eventIds: string[]; executionId: string; reason: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET status = 'done', completed_at = now(), completed_by = 'ordering', lease_until = now(), last_error = $4
WHERE consumer = $1 AND event_id = ANY($2::text[]) AND execution_id = $3`,
	values: [input.consumer, input.eventIds, input.executionId, input.reason],
});

/** What Complete and Release may change: a claim in progress, or one done at claim; never a completed one. */
const openOrClaimDone = `(status = 'in_progress' OR completed_by = 'claim')`;

/**
 * Marks events done for good (completed: release never undoes them), if the given execution
 * (`executionId`) holds their claims. Returns every event that has a claim: changed or not, and its owner.
 */
export const completeEventsSql = (
	store: Store,
	input: { consumer: string; eventIds: string[]; executionId: string },
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT event_id, status, execution_id, completed_by FROM ${store.table('processed_events')}
	WHERE consumer = $1 AND event_id = ANY($2::text[]) ORDER BY event_id FOR UPDATE
), done AS (
	UPDATE ${store.table('processed_events')} p SET status = 'done', completed_at = now(), completed_by = 'complete'
	FROM target t
	WHERE p.consumer = $1 AND p.event_id = t.event_id AND t.execution_id = $3
	  AND (t.status = 'in_progress' OR t.completed_by = 'claim')
	RETURNING p.event_id
)
SELECT t.event_id, d.event_id IS NOT NULL AS changed, t.execution_id AS owner,
       CASE WHEN d.event_id IS NOT NULL THEN 'done' ELSE t.status END AS status
FROM target t LEFT JOIN done d ON d.event_id = t.event_id`,
	values: [input.consumer, input.eventIds, input.executionId],
});

/** Marks every claim of one execution done for good (the success path of lease mode). */
export const completeExecutionSql = (store: Store, input: { executionId: string }): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET status = 'done', completed_at = now(), completed_by = 'complete'
WHERE execution_id = $1 AND ${openOrClaimDone}
RETURNING event_id`,
	values: [input.executionId],
});

/** Restores the entity versions that released claims had advanced (CTEs that follow `released`). */
const restoreVersions = (store: Store): string => `
restored AS (
	UPDATE ${store.table('entity_versions')} v
	SET version = v.previous_version, previous_version = NULL, execution_id = NULL, updated_at = now()
	FROM released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.execution_id = r.execution_id AND v.previous_version IS NOT NULL
	RETURNING v.entity_key
), removed AS (
	DELETE FROM ${store.table('entity_versions')} v
	USING released r
	WHERE v.consumer = r.consumer AND v.event_id = r.event_id AND v.execution_id = r.execution_id AND v.previous_version IS NULL
	RETURNING v.entity_key
)`;

/**
 * Releases the claims a failed execution made (all consumers: the error workflow does not know
 * them), restoring entity versions it had advanced. Claims in progress and claims done at claim
 * are released; a completed event stays done: its work finished. Inbox claims (their items kept)
 * are never deleted here: failing them keeps the item and lets a redelivery claim it.
 */
export const releaseExecutionSql = (store: Store, input: { executionId: string }): SqlQuery => ({
	text: `
WITH released AS (
	DELETE FROM ${store.table('processed_events')}
	WHERE execution_id = $1 AND ${openOrClaimDone} AND payload IS NULL AND payload_bytes IS NULL
	RETURNING consumer, event_id, execution_id
), ${restoreVersions(store)}
SELECT count(*)::int AS released FROM released`,
	values: [input.executionId],
});

/**
 * Releases given events of one consumer that execution `executionId` holds, with the same rules:
 * a completed event stays done, another execution's claim is never released (its work may be
 * running), and an inbox claim is failed with its item kept (a redelivery claims it as new, and
 * the record of who held it stays), never deleted.
 */
export const releaseEventsSql = (
	store: Store,
	input: { consumer: string; eventIds: string[]; executionId: string },
): SqlQuery => ({
	text: `
WITH failed AS (
	UPDATE ${store.table('processed_events')}
	SET status = 'failed', lease_until = now(), last_error = 'released by execution ' || $3,
	    settled_as = 'dropped'
	WHERE consumer = $1 AND event_id = ANY($2::text[]) AND execution_id = $3 AND status = 'in_progress'
	  AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)
	RETURNING event_id
), released AS (
	DELETE FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = ANY($2::text[]) AND execution_id = $3 AND ${openOrClaimDone}
	  AND payload IS NULL AND payload_bytes IS NULL
	RETURNING consumer, event_id, execution_id
), ${restoreVersions(store)}
SELECT event_id FROM released UNION ALL SELECT event_id FROM failed`,
	values: [input.consumer, input.eventIds, input.executionId],
});

/**
 * Removes done and failed events past retention, in bounded slices so a large purge never holds
 * long locks. A claim still in progress is never purged: it is the only trace of its event; nor is
 * a failed claim whose item nothing holds yet (no letter, no named rule): it is the only copy of
 * the item until Recover's sweep parks it. A row a claim holds right now is skipped, not waited
 * on: the next purge takes it.
 */
export const purgeExpiredSql = (
	store: Store,
	input: { consumer: string | null; limit: number; after?: string | null },
): SqlQuery => {
	const table = store.table('processed_events');
	const expired = `expires_at < now() AND (status = 'done' OR (status = 'failed' AND (settled_as IS NOT NULL OR NOT ${keptItem(table)})))`;
	// Every consumer (Housekeeping): the expires_at index in order, from the last slice's end.
	if (input.consumer === null)
		return {
			text: `
WITH doomed AS (
	SELECT ctid, expires_at AS at FROM ${table}
	WHERE ${expired} AND ${afterSql('expires_at', 2, 'timestamptz')}
	ORDER BY expires_at
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(table, true)}`,
			values: [input.limit, input.after ?? null],
		};
	// One consumer (the node's Purge): no index leads with consumer and expires_at, so an ordered
	// pick would sort all of the consumer's rows for every slice; this one stops at the slice's size.
	return {
		text: `
WITH doomed AS (
	SELECT ctid FROM ${table}
	WHERE ${expired} AND consumer = $1
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(table)}`,
		values: [input.consumer, input.limit],
	};
};

/**
 * Removes the ordering version of entities that have not moved for `olderThanDays` days, one
 * slice of `limit`.
 * After that long an older version of the entity is accepted again, as an event ID past its
 * retention is. A version whose claim is still in progress stays: releasing that claim restores
 * the previous version from it.
 */
export const purgeEntityVersionsSql = (
	store: Store,
	input: { olderThanDays: number; limit: number },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT v.ctid FROM ${store.table('entity_versions')} v
	WHERE v.updated_at < now() - make_interval(days => $1)
	  AND NOT EXISTS (
		SELECT 1 FROM ${store.table('processed_events')} p
		WHERE p.consumer = v.consumer AND p.event_id = v.event_id AND p.status = 'in_progress'
	  )
	LIMIT $2
	FOR UPDATE OF v SKIP LOCKED
)${deleteDoomed(store.table('entity_versions'))}`,
	values: [input.olderThanDays, input.limit],
});
