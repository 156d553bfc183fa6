import type { SqlQuery, Store } from '../../store';

/** A claim made inside the caller's own transaction, done together with the work. */

/**
 * Claims one event inside the caller's transaction, done for good at once: the work runs in the
 * same transaction, so the claim and the work commit together or not at all (seed 001's
 * "checked and written in the same transaction as the work"). Returns a row when it claimed;
 * none when the event was already processed (or is claimed elsewhere under a live lease). A
 * claim the same execution holds (Event Dedupe before the Outbox in one workflow) is completed
 * with the work.
 */
export const claimWithWorkSql = (
	store: Store,
	input: {
		consumer: string;
		eventId: string;
		workflowId: string | null;
		executionId: string;
		retentionDays: number;
	},
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('processed_events')} AS p
	(consumer, event_id, status, workflow_id, execution_id, origin_execution_id, claimed_at, lease_until,
	 completed_at, completed_by, expires_at)
VALUES ($1, $2, 'done', $3, $4, $4, now(), now(), now(), 'complete', now() + make_interval(days => $5))
ON CONFLICT (consumer, event_id) DO UPDATE SET
	status = 'done', workflow_id = EXCLUDED.workflow_id, execution_id = EXCLUDED.execution_id,
	origin_execution_id = EXCLUDED.origin_execution_id, claimed_at = now(), lease_until = now(),
	completed_at = now(), completed_by = 'complete', expires_at = EXCLUDED.expires_at,
	generation = p.generation + 1, payload = NULL, payload_bytes = NULL, recover_attempts = 0, last_error = NULL,
	previous_executions = CASE WHEN p.execution_id IS DISTINCT FROM EXCLUDED.execution_id AND p.execution_id IS NOT NULL THEN (p.previous_executions || p.execution_id)[greatest(1, cardinality(p.previous_executions) - 14):] ELSE p.previous_executions END
WHERE (p.status = 'in_progress' AND p.lease_until < now())
   -- This execution's own claim (Event Dedupe earlier in the workflow): the work completes it.
   OR (p.status = 'in_progress' AND p.execution_id = $4)
   OR p.status = 'failed'
   OR (p.status = 'done' AND p.expires_at < now())
RETURNING p.event_id`,
	values: [input.consumer, input.eventId, input.workflowId, input.executionId, input.retentionDays],
});

/** The live claim on an event, if another execution holds one (none when it is done). */
export const eventStatusSql = (
	store: Store,
	input: { consumer: string; eventId: string },
): SqlQuery => ({
	text: `
SELECT execution_id FROM ${store.table('processed_events')}
WHERE consumer = $1 AND event_id = $2 AND status = 'in_progress'`,
	values: [input.consumer, input.eventId],
});
