import type { SqlQuery, Store } from '../../store';
import { eventLetterKeySql, hashedEventLetterKeySql } from '../eventIds';

/**
 * Accounting for inbox claims whatever the user configured: which settler of an ended execution
 * goes first, what holds a failed claim (a letter of its own, or an item of an execution that
 * called it as a sub-workflow), the sweep that parks a failed claim nothing holds, and the hold
 * of an execution that waits (a Wait n8n offloads) until n8n says how it ended.
 */

/** An inbox claim: its item kept (or too big to keep, and said so). */
export const keptItem = (alias: string): string =>
	`(${alias}.payload IS NOT NULL OR ${alias}.payload_bytes IS NOT NULL)`;

/**
 * An item of an execution that called claim `p`'s execution as a sub-workflow (its ancestors),
 * in the state `state` (SQL over `q`): held by it, or taken from it since (a redelivery, Recover).
 * Three lookups, each by its own index (the claim's execution, its origin, its earlier ones),
 * not one condition with ORs, which the planner can only meet with a scan of every claim.
 */
const ancestorItem = (store: Store, p: string, state: string): string =>
	itemOfCallers(
		store,
		`${p}.ancestors`,
		`NOT (q.consumer = ${p}.consumer AND q.event_id = ${p}.event_id)`,
		state,
	);

/** An item (`q`) of the executions in the array `callers` (SQL), other than `also`, in `state`. */
const itemOfCallers = (store: Store, callers: string, also: string, state: string): string => {
	const table = store.table('processed_events');
	const other = `${keptItem('q')} AND ${also} AND (${state})`;
	return `
EXISTS (
	SELECT 1 FROM ${table} q WHERE q.execution_id = ANY(${callers}) AND ${other}
	UNION ALL
	SELECT 1 FROM ${table} q WHERE q.origin_execution_id = ANY(${callers}) AND ${other}
	UNION ALL
	SELECT 1 FROM ${table} q WHERE q.previous_executions && ${callers} AND ${other})`;
};

/** The ancestor's item is alive: its execution runs, or Recover will run it again. */
const ALIVE = `q.status = 'in_progress'`;
/**
 * What holds the sub-workflow's item once its ancestor's item is settled: the ancestor's item
 * failed and a letter holds it (or will: the sweep parks it); an open letter of it waits for a
 * person (its claim since dropped as stale under Check Order); or a later run of the item (a
 * redelivery, Recover's re-run) finished it, and that run is the item's work now. Only an item
 * its ancestor itself finished (it went on without the sub-workflow) leaves the sub-workflow's
 * item to a letter of its own; so does a recovery run that finished the item after the re-run
 * that called the sub-workflow (the ancestor) went on without it.
 */
const holds = (store: Store, p: string): string => {
	const plain = eventLetterKeySql('q.consumer', 'q.event_id');
	return `(q.status = 'failed' AND q.settled_as IS DISTINCT FROM 'dropped')
		OR (q.status = 'done' AND NOT (q.execution_id = ANY(${p}.ancestors))
		    AND NOT (q.rerun_execution IS NOT NULL AND q.rerun_execution = ANY(${p}.ancestors)))
		OR EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d
		           WHERE d.idempotency_key IN (${plain}, ${hashedEventLetterKeySql(plain)}) AND d.is_open)`;
};

/**
 * Whether an ancestor's item holds claim `p`'s item: alive (its failure will be its letter, or its
 * re-run calls this sub-workflow again), or failed into a letter that a replay re-runs through
 * this sub-workflow. A claim of a sub-workflow so held gets no letter of its own: one item, one
 * letter.
 */
export const heldAboveSql = (store: Store, p: string): string =>
	`(cardinality(${p}.ancestors) > 0 AND ${ancestorItem(store, p, `(${ALIVE}) OR ${holds(store, p)}`)})`;

/**
 * Whether the failure of a run that kept no items of its own is an item's of the executions that
 * called it (`callers`): an item a Recover run holds (its re-run failed: the item goes back to
 * Recover, which runs it again or gives it up into its letter), or the one item a caller holds
 * that has failed into a letter, judged by the nearest caller that holds items. A caller whose
 * item still runs (a re-run handed the item it waited with included) may yet go on without the
 * failed sub-workflow (Continue On Fail): its failure is then parked as the run's own.
 */
export const callersHoldItemSql = (store: Store, input: { callers: string[] }): SqlQuery => {
	const table = store.table('processed_events');
	return {
		text: `
WITH nearest AS (
	-- The nearest caller that holds items judges: a re-run handed an item that waited holds it as
	-- any run does, whatever its recovery run holds besides.
	SELECT c.id FROM unnest($1::text[]) WITH ORDINALITY AS c(id, ord)
	WHERE EXISTS (SELECT 1 FROM ${table} q WHERE q.execution_id = c.id AND ${keptItem('q')})
	ORDER BY c.ord LIMIT 1
)
SELECT EXISTS (
	SELECT 1 FROM ${table} q
	WHERE q.execution_id = (SELECT id FROM nearest) AND ${keptItem('q')} AND q.status = 'in_progress'
	  AND q.execution_id IS DISTINCT FROM q.origin_execution_id
	  AND q.execution_id IS DISTINCT FROM q.rerun_execution
) OR (
	(SELECT count(*) FROM ${table} q WHERE q.execution_id = (SELECT id FROM nearest) AND ${keptItem('q')}) = 1
	AND EXISTS (
		SELECT 1 FROM ${table} q
		WHERE q.execution_id = (SELECT id FROM nearest) AND ${keptItem('q')}
		  AND q.status = 'failed' AND q.settled_as IS DISTINCT FROM 'dropped')
) AS held`,
		values: [input.callers],
	};
};

/**
 * Sub-workflow claims whose execution died with their caller's (a crash kills both) and whose
 * caller's item is settled now: held by a letter, or done by a later run (which called the
 * sub-workflow again, or did without it). They are failed, held by that item (`covered`): Recover
 * never runs a sub-workflow's item on its own while its caller's item stands for it.
 */
export const coverLapsedSubClaimsSql = (
	store: Store,
	input: { workflowId: string | null },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')} p
SET status = 'failed', settled_as = 'covered', lease_until = now(),
    last_error = coalesce(last_error, 'its execution died with the one that called it')
WHERE p.status = 'in_progress' AND p.lease_until < now() AND p.waiting_till IS NULL
  AND ${keptItem('p')} AND cardinality(p.ancestors) > 0
  AND ($1::text IS NULL OR p.workflow_id = $1)
  AND NOT ${ancestorItem(store, 'p', ALIVE)} AND ${ancestorItem(store, 'p', holds(store, 'p'))}
RETURNING p.event_id`,
	values: [input.workflowId],
});

/**
 * Claims the settlement of an ended execution: the first settler (its end-of-execution hook, the
 * error workflow, Recover asking n8n) inserts the report and settles it; every later one (n8n
 * reporting a crash again, an error workflow that runs after the hook) only counts.
 */
export const claimExecutionReportSql = (
	store: Store,
	input: { executionId: string; ending: 'failed' | 'crashed' | 'stopped' },
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('execution_reports')} AS r (execution_id, ending)
VALUES ($1, $2)
ON CONFLICT (execution_id) DO UPDATE SET reports = r.reports + 1, last_reported_at = now()
RETURNING reports, (xmax = 0) AS first`,
	values: [input.executionId, input.ending],
});

/** Undoes a first claim of an execution's settlement that settled nothing. */
export const releaseExecutionReportSql = (
	store: Store,
	input: { executionId: string },
): SqlQuery => ({
	text: `DELETE FROM ${store.table('execution_reports')} WHERE execution_id = $1 AND reports = 1`,
	values: [input.executionId],
});

/**
 * Marks failed claims as parked: a letter of the item now holds each (given as parallel arrays of
 * consumer and event ID). Only claims still failed and unsettled.
 */
export const markParkedSql = (
	store: Store,
	input: { consumers: string[]; eventIds: string[] },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')} p SET settled_as = 'parked'
FROM unnest($1::text[], $2::text[]) AS t(consumer, event_id)
WHERE p.consumer = t.consumer AND p.event_id = t.event_id AND p.status = 'failed' AND p.settled_as IS NULL`,
	values: [input.consumers, input.eventIds],
});

/**
 * The sweep (Recover, every minute): takes up to `limit` failed claims that nothing holds yet,
 * failed at least `graceSeconds` ago (so a settler that failed a claim and parks it next has had
 * its time), of `workflowId` (all when null). Each is judged: a letter of its item parked since
 * it was claimed holds it (`parked`); an ancestor's live item may still (`wait`: looked at again
 * after the grace); an ancestor's settled item holds it (`covered`, see holds); an open letter
 * that the calling execution parked (a write of the item it went on with) holds it (`letter`:
 * covered, and returned, for the letter to say so); else it is returned to park (`park`), and
 * held for `takeSeconds` meanwhile, so a second sweep does not park it too (a park that fails
 * leaves it for a later sweep).
 */
export const takeUnsettledSql = (
	store: Store,
	input: { limit: number; graceSeconds: number; workflowId: string | null; takeSeconds: number },
): SqlQuery => {
	const plain = eventLetterKeySql('p.consumer', 'p.event_id');
	return {
		text: `
WITH picked AS MATERIALIZED (
	SELECT p.consumer, p.event_id, p.ancestors,
	       EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d
	               WHERE d.idempotency_key IN (${plain}, ${hashedEventLetterKeySql(plain)})
	                 AND d.last_failed_at >= p.claimed_at) AS lettered,
	       (SELECT min(d.id) FROM ${store.table('dead_letters')} d
	        WHERE d.execution_id = ANY(p.ancestors) AND d.is_open) AS letter_above
	FROM ${store.table('processed_events')} p
	WHERE p.status = 'failed' AND p.settled_as IS NULL AND ${keptItem('p')}
	  AND p.lease_until < now() - make_interval(secs => $2)
	  AND ($3::text IS NULL OR p.workflow_id = $3)
	ORDER BY p.lease_until, p.consumer, p.event_id
	LIMIT $1
	FOR UPDATE SKIP LOCKED
), judged AS MATERIALIZED (
	SELECT k.consumer, k.event_id, k.letter_above,
	       CASE WHEN k.lettered THEN 'parked'
	            WHEN cardinality(k.ancestors) = 0 THEN 'park'
	            WHEN ${ancestorItem(store, 'k', ALIVE)} THEN 'wait'
	            WHEN ${ancestorItem(store, 'k', holds(store, 'k'))} THEN 'covered'
	            WHEN k.letter_above IS NOT NULL THEN 'letter'
	            ELSE 'park' END AS verdict
	FROM picked k
), marked AS (
	UPDATE ${store.table('processed_events')} p
	SET settled_as = CASE WHEN j.verdict IN ('parked', 'covered') THEN j.verdict
	                      WHEN j.verdict = 'letter' THEN 'covered' END,
	    lease_until = CASE WHEN j.verdict = 'wait' THEN now()
	                       WHEN j.verdict = 'park' THEN now() + make_interval(secs => $4)
	                       ELSE p.lease_until END
	FROM judged j
	WHERE p.consumer = j.consumer AND p.event_id = j.event_id
	RETURNING p.consumer, p.event_id, p.workflow_id, p.execution_id, p.origin_execution_id, p.payload,
	          p.payload_bytes, p.last_error, p.failed_step, cardinality(p.ancestors) > 0 AS in_sub_workflow,
	          j.verdict, j.letter_above
)
SELECT consumer, event_id, workflow_id, execution_id, origin_execution_id, payload, payload_bytes,
       last_error, failed_step, in_sub_workflow, verdict, letter_above
FROM marked WHERE verdict IN ('park', 'letter') ORDER BY consumer, event_id`,
		values: [input.limit, input.graceSeconds, input.workflowId, input.takeSeconds],
	};
};

/**
 * Executions whose claims wait (a Wait n8n offloaded) that are due to be asked about: n8n is to
 * be asked how each stands. Up to `limit`, of `workflowId` (all when null), longest due first.
 */
export const waitingExecutionsSql = (
	store: Store,
	input: { limit: number; workflowId: string | null },
): SqlQuery => ({
	text: `
SELECT execution_id, min(workflow_id) AS workflow_id, max(waiting_till) AS waiting_till,
       max(run_limit_seconds) AS run_limit_seconds, bool_or(if_gone IS DISTINCT FROM 'done') AS check_if_gone
FROM ${store.table('processed_events')}
WHERE status = 'in_progress' AND waiting_till IS NOT NULL AND ask_at < now() AND ${keptItem('processed_events')}
  AND ($2::text IS NULL OR workflow_id = $2)
GROUP BY execution_id
ORDER BY min(ask_at), execution_id
LIMIT $1`,
	values: [input.limit, input.workflowId],
});

/**
 * The execution still waits, or runs after its resume: its claims are held, still as waiting,
 * and n8n is asked again at `holdUntil`.
 */
export const extendWaitSql = (
	store: Store,
	input: { executionId: string; holdUntil: Date },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET lease_until = greatest(lease_until, $2::timestamptz), ask_at = $2::timestamptz
WHERE execution_id = $1 AND status = 'in_progress' AND waiting_till IS NOT NULL`,
	values: [input.executionId, input.holdUntil],
});

/**
 * A node of the package runs in an execution that resumed after a Wait (new lifecycle hooks):
 * its claims are no longer waiting; the process that runs them holds them (`leaseSeconds`), and
 * their end settles them as any execution's. Returns how many claims it holds.
 */
export const resumeExecutionClaimsSql = (
	store: Store,
	input: { executionId: string; leaseSeconds: number },
): SqlQuery => ({
	text: `
UPDATE ${store.table('processed_events')}
SET waiting_till = NULL, ask_at = NULL, lease_until = now() + make_interval(secs => $2)
WHERE execution_id = $1 AND status = 'in_progress' AND ${keptItem('processed_events')}
RETURNING event_id`,
	values: [input.executionId, input.leaseSeconds],
});

/** The executions that held an item's claim: its owner, its origin, and those it was taken from. */
export const runsOfItemSql = (
	store: Store,
	input: { consumer: string; eventId: string },
): SqlQuery => ({
	text: `
SELECT array_remove(ARRAY[execution_id, origin_execution_id] || previous_executions, NULL) AS runs
FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = $2`,
	values: [input.consumer, input.eventId],
});

/**
 * The open letters that write steps parked for one item (alerted or not: `issue_id`): those of the runs of
 * the item (`executions`: the one settling it, and every execution its claim was held by:
 * earlier deliveries, a dead one a redelivery took over, Recover's) that kept only this one item,
 * so a write letter of a run that held many items is never folded into the wrong one's. Folded
 * into the item's letter when it is parked. Each lookup by its own index.
 */
export const openWriteLettersOfItemSql = (
	store: Store,
	input: { executions: string[] },
): SqlQuery => ({
	text: `
WITH runs AS MATERIALIZED (
	SELECT r.execution_id FROM unnest($1::text[]) AS r(execution_id)
	WHERE (SELECT count(*) FROM (
	         SELECT q.consumer, q.event_id FROM ${store.table('processed_events')} q
	         WHERE q.origin_execution_id = r.execution_id AND ${keptItem('q')}
	         UNION
	         SELECT q.consumer, q.event_id FROM ${store.table('processed_events')} q
	         WHERE q.previous_executions @> ARRAY[r.execution_id] AND ${keptItem('q')}) items) = 1
)
SELECT d.id, d.step, d.error_class, d.error_message, d.integration, d.attempt_history, d.issue_id
FROM ${store.table('dead_letters')} d
WHERE d.execution_id IN (SELECT execution_id FROM runs) AND d.is_open
  AND d.status IN ('new', 'held')
  AND (d.idempotency_key IS NULL OR (d.idempotency_key NOT LIKE 'event:%'
       AND d.idempotency_key NOT LIKE 'execution:%' AND d.idempotency_key NOT LIKE 'trigger:%'))
ORDER BY d.id`,
	values: [input.executions],
});

/**
 * The item's letter `id` takes the issue a folded write letter of the same item was alerted in
 * (`issueId`), unless it is in one already: the person that alert woke follows the item there,
 * and no second alert is due for it. Returns the letter when it took the issue.
 */
export const takeAlertedIssueSql = (
	store: Store,
	input: { id: string; issueId: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('dead_letters')} SET issue_id = $2, alert_due = NULL
WHERE id = $1 AND is_open AND issue_id IS NULL
RETURNING id`,
	values: [input.id, input.issueId],
});
