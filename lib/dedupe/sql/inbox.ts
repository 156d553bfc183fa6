import { afterSql, deleteDoomed, type SqlQuery, type Store } from '../../store';
import { heldAboveSql, keptItem } from './accounting';

/**
 * Claims held until their execution ends, with the item kept (the inbox): renewed while it runs,
 * settled by how it ended, and taken by Recover when their owner died.
 */

/** Renews the leases of the claims the given executions hold while they run (the keeper's beat). */
export const renewExecutionClaimsSql = (
	store: Store,
	input: { executionIds: string[]; leaseSeconds: number },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET lease_until = greatest(lease_until, now() + make_interval(secs => $2))
WHERE execution_id = ANY($1::text[]) AND status = 'in_progress'`,
	values: [input.executionIds, input.leaseSeconds],
});

/**
 * The execution failed (or was stopped): its claims are failed with their items kept, `step` the
 * node it failed at. What holds each now: `dropped` for all (a named rule: Release, a run from the
 * editor), `parked` for the events given in `parked` (their letters were just parked), else
 * nothing yet (an error workflow parks them, or Recover's sweep does).
 */
export const failExecutionClaimsSql = (
	store: Store,
	input: {
		executionId: string;
		message: string | null;
		step?: string | null;
		dropped?: boolean;
		parked?: { consumers: string[]; eventIds: string[] };
	},
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')} p
SET status = 'failed', lease_until = now(), last_error = coalesce($2, last_error),
    failed_step = coalesce($3, failed_step),
    settled_as = CASE WHEN $4 THEN 'dropped'
                      WHEN (p.consumer, p.event_id) IN (SELECT * FROM unnest($5::text[], $6::text[])) THEN 'parked'
                      -- What held a claim before it was taken again means nothing now.
                      WHEN p.status = 'in_progress' THEN NULL
                      ELSE p.settled_as END
WHERE execution_id = $1 AND status IN ('in_progress', 'failed') AND ${keptItem('p')}
  AND NOT (p.status = 'failed' AND p.settled_as IS NOT DISTINCT FROM 'dropped')
RETURNING consumer, event_id, workflow_id, origin_execution_id, payload, payload_bytes,
          ${heldAboveSql(store, 'p')} AS held_above`,
	values: [
		input.executionId,
		input.message,
		input.step ?? null,
		input.dropped === true,
		input.parked?.consumers ?? [],
		input.parked?.eventIds ?? [],
	],
});

/**
 * The execution waits (a Wait node): its claims are kept until it may resume, plus a lease. n8n
 * resumes a long wait in a new process with new lifecycle hooks, and a person may stop a waiting
 * execution (no hook runs then), so the claims are marked as waiting, never taken by a
 * redelivery or a re-run, and Recover asks n8n how the execution stands (`ifGone`: what a record
 * n8n no longer has means) at the wait's end, and at most `askEverySeconds` apart meanwhile.
 */
export const holdExecutionClaimsSql = (
	store: Store,
	input: {
		executionId: string;
		waitTill: Date;
		leaseSeconds: number;
		ifGone: 'done' | 'check';
		askEverySeconds: number;
		runLimitSeconds: number | null;
	},
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET lease_until = greatest(lease_until, $2::timestamptz + make_interval(secs => $3)),
    ask_at = least($2::timestamptz + make_interval(secs => $3), now() + make_interval(secs => $5)),
    waiting_till = $2, if_gone = $4, run_limit_seconds = $6
WHERE execution_id = $1 AND status = 'in_progress'`,
	values: [
		input.executionId,
		input.waitTill,
		input.leaseSeconds,
		input.ifGone,
		input.askEverySeconds,
		input.runLimitSeconds,
	],
});

/**
 * The execution crashed: its inbox claims' leases end now, so the Recover workflow takes them at
 * once, and the execution no longer holds them (it moves to the claims' previous executions). A
 * crash n8n reports may be of a process still running it: a queue-mode job that n8n failed as
 * stalled while its worker was only slow. That process's keeper can then no longer renew them,
 * nor its end complete or fail them; Recover runs them again (their writes return their saved
 * results), so no item is left failed with no one to park it.
 */
export const endExecutionLeasesSql = (
	store: Store,
	input: { executionId: string; message: string | null },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET lease_until = least(lease_until, now()), last_error = coalesce($2, last_error),
    execution_id = NULL, generation = generation + 1, waiting_till = NULL,
    previous_executions = (previous_executions || execution_id)[greatest(1, cardinality(previous_executions) - 14):]
WHERE execution_id = $1 AND status = 'in_progress' AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)
RETURNING event_id`,
	values: [input.executionId, input.message],
});

/**
 * Takes up to `limit` inbox claims whose owner is gone (in progress, lease ended) for one recovery
 * run (`executionId`; of workflow `workflowId` alone when given), atomically (two recoverers never
 * take one), fenced (generation + 1): a claim tried fewer than `maxAttempts` times is re-run (its
 * lease `leaseSeconds`, counted); a claim tried `maxAttempts` times, or whose item was not kept,
 * is given up: failed, for the caller to park. Returns both kinds with the
 * origin execution and what its write steps did.
 */
export const takeCrashedSql = (
	store: Store,
	input: {
		executionId: string;
		limit: number;
		maxAttempts: number;
		leaseSeconds: number;
		workflowId: string | null;
	},
): SqlQuery => ({
	text: `
WITH lapsed AS (
	SELECT consumer, event_id FROM ${store.table('processed_events')} p
	WHERE status = 'in_progress' AND lease_until < now() AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)
	  AND waiting_till IS NULL AND ($5::text IS NULL OR workflow_id = $5)
	  -- A sub-workflow's claim whose caller's item lives or is held is that item's: its re-run
	  -- (or letter) calls the sub-workflow again.
	  AND NOT ${heldAboveSql(store, 'p')}
	ORDER BY lease_until, consumer, event_id
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), taken AS (
	UPDATE ${store.table('processed_events')} p
	SET generation = p.generation + 1,
	    previous_executions = CASE WHEN p.execution_id IS DISTINCT FROM $1 AND p.execution_id IS NOT NULL THEN (p.previous_executions || p.execution_id)[greatest(1, cardinality(p.previous_executions) - 14):] ELSE p.previous_executions END,
	    execution_id = CASE WHEN p.recover_attempts < $3 AND p.payload IS NOT NULL THEN $1 ELSE p.execution_id END,
	    rerun_at = NULL,
	    recover_attempts = p.recover_attempts + CASE WHEN p.recover_attempts < $3 AND p.payload IS NOT NULL THEN 1 ELSE 0 END,
	    status = CASE WHEN p.recover_attempts < $3 AND p.payload IS NOT NULL THEN 'in_progress' ELSE 'failed' END,
	    lease_until = now() + make_interval(secs => $4),
	    last_error = CASE WHEN p.recover_attempts < $3 AND p.payload IS NOT NULL THEN p.last_error
	                      WHEN p.payload IS NULL THEN 'its execution ended without finishing, and the item was over the inbox cap, so it cannot be re-run'
	                      ELSE 'given up after ' || p.recover_attempts || ' recoveries' END
	FROM lapsed l
	WHERE p.consumer = l.consumer AND p.event_id = l.event_id
	RETURNING p.consumer, p.event_id, p.workflow_id, p.origin_execution_id, p.payload, p.payload_bytes, p.generation,
	          p.recover_attempts, p.status, p.last_error
)
SELECT t.*, (
	SELECT coalesce(json_agg(json_build_object('step', k.node, 'status', k.status) ORDER BY k.created_at), '[]'::json)
	FROM ${store.table('idempotency_keys')} k WHERE k.execution_id = t.origin_execution_id
) AS steps
FROM taken t`,
	values: [input.executionId, input.limit, input.maxAttempts, input.leaseSeconds, input.workflowId],
});

/**
 * A recovery run (`executionId`) starts re-running an item it holds: the item is marked, so a
 * sub-workflow that claims inside the re-run knows which of the run's items it is part of. The
 * run re-runs one item at a time; the latest mark is the re-run under way.
 */
export const markRerunSql = (
	store: Store,
	input: { consumer: string; eventId: string; executionId: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')} SET rerun_at = clock_timestamp()
WHERE consumer = $1 AND event_id = $2 AND execution_id = $3 AND status = 'in_progress'`,
	values: [input.consumer, input.eventId, input.executionId],
});

/**
 * A recovery run's re-run of an item (`rerunExecution`) returned, or failed: it is recorded as
 * the item's latest re-run, before the run starts the next, so a sub-workflow of it that claims
 * later still finds its item. Fenced: only while the recovery run (`executionId`) holds it (it
 * records before it completes the item or gives it back); a run that lost the item to another
 * recovery run records nothing over that run's re-run.
 */
export const recordRerunSql = (
	store: Store,
	input: { consumer: string; eventId: string; executionId: string; rerunExecution: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')} SET rerun_execution = $4
WHERE consumer = $1 AND event_id = $2 AND execution_id = $3`,
	values: [input.consumer, input.eventId, input.executionId, input.rerunExecution],
});

/**
 * A recovery run's re-run of an item returned waiting (a Wait n8n offloads): the item is the
 * re-run's now (`rerunExecution`), held as waiting until `waitTill`, as any execution that waits
 * (holdExecutionClaimsSql): its end settles it if a node of the package runs after the Wait,
 * and otherwise Recover asks n8n how the re-run ended. Fenced by the recovery run that holds it.
 */
export const handRerunToWaitSql = (
	store: Store,
	input: {
		consumer: string;
		eventId: string;
		executionId: string;
		rerunExecution: string;
		waitTill: Date;
		askEverySeconds: number;
	},
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET execution_id = $4, rerun_execution = $4, generation = generation + 1,
    previous_executions = (previous_executions || execution_id)[greatest(1, cardinality(previous_executions) - 14):],
    waiting_till = $5, if_gone = 'check',
    lease_until = greatest(lease_until, $5::timestamptz + interval '60 seconds'),
    ask_at = least($5::timestamptz + interval '60 seconds', now() + make_interval(secs => $6))
WHERE consumer = $1 AND event_id = $2 AND execution_id = $3 AND status = 'in_progress'`,
	values: [
		input.consumer,
		input.eventId,
		input.executionId,
		input.rerunExecution,
		input.waitTill,
		input.askEverySeconds,
	],
});

/**
 * A recovery run's re-run of an item failed: the item goes back to Recover at once (its lease
 * ends now, and the run no longer holds it, so the run's keeper does not renew it), if this run
 * (`executionId`) still holds it; the attempt stays counted.
 */
export const returnToRecoverySql = (
	store: Store,
	input: { consumer: string; eventId: string; executionId: string; message: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET lease_until = now(), last_error = $4, execution_id = NULL,
    previous_executions = (previous_executions || execution_id)[greatest(1, cardinality(previous_executions) - 14):]
WHERE consumer = $1 AND event_id = $2 AND execution_id = $3 AND status = 'in_progress'`,
	values: [input.consumer, input.eventId, input.executionId, input.message],
});

/**
 * How many items the inbox kept for an execution's claims, whoever holds them now: its own, and
 * those a redelivery or Recover has taken from it since.
 */
export const countInboxOfExecutionSql = (
	store: Store,
	input: { executionId: string },
): SqlQuery => ({
	text: `
SELECT count(*)::int AS kept FROM ${store.table('processed_events')}
WHERE (origin_execution_id = $1 OR previous_executions @> ARRAY[$1::text])
  AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)`,
	values: [input.executionId],
});

/**
 * The inbox claims an execution holds (running or failed), with their items, in ID order, and
 * whether an item of an execution that called it holds each (heldAboveSql).
 */
export const inboxOfExecutionSql = (store: Store, input: { executionId: string }): SqlQuery => ({
	text: `
SELECT consumer, event_id, workflow_id, origin_execution_id, payload, payload_bytes,
       ${heldAboveSql(store, 'p')} AS held_above
FROM ${store.table('processed_events')} p
WHERE execution_id = $1 AND status IN ('in_progress', 'failed') AND ${keptItem('p')}
  AND NOT (p.status = 'failed' AND p.settled_as IS NOT DISTINCT FROM 'dropped')
ORDER BY consumer, event_id`,
	values: [input.executionId],
});

/**
 * The execution crashed, yet some of its claims are failed: its end-of-execution hook ran, so it
 * did end (with an error) in the process that ran it. Those items are parked, not left to Recover.
 */
export const failedClaimsOfExecutionSql = (
	store: Store,
	input: { executionId: string; message: string | null },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET last_error = coalesce(last_error, $2)
WHERE execution_id = $1 AND status = 'failed' AND (payload IS NOT NULL OR payload_bytes IS NOT NULL)
  AND settled_as IS DISTINCT FROM 'dropped'
RETURNING consumer, event_id, workflow_id, origin_execution_id, payload, payload_bytes`,
	values: [input.executionId, input.message],
});

/** Removes reports older than `olderThanDays` days, one slice of `limit`. */
export const purgeExecutionReportsSql = (
	store: Store,
	input: { olderThanDays: number; limit: number; after?: string | null },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid, first_reported_at AS at FROM ${store.table('execution_reports')}
	WHERE first_reported_at < now() - make_interval(days => $1)
	  AND ${afterSql('first_reported_at', 3, 'timestamptz')}
	ORDER BY first_reported_at
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('execution_reports'), true)}`,
	values: [input.olderThanDays, input.limit, input.after ?? null],
});
