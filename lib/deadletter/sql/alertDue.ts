import type { SqlQuery, Store } from '../../store';

/**
 * Marks the alert of letters `ids` that execution `executionId` parked as due, unless an inbox keeps
 * that execution's items (its end-of-execution hook parks each of them with its alert due).
 */
export const markAlertDueSql = (
	store: Store,
	input: { executionId: string; ids: string[] },
): SqlQuery => ({
	text: `
UPDATE ${store.table('dead_letters')} SET alert_due = coalesce(alert_due, now())
WHERE id = ANY($2::bigint[]) AND status = 'new'
  AND NOT EXISTS (SELECT 1 FROM ${store.table('processed_events')} p
                  WHERE p.execution_id = $1 AND p.status IN ('in_progress', 'failed')
                    AND (p.payload IS NOT NULL OR p.payload_bytes IS NOT NULL))`,
	values: [input.executionId, input.ids],
});

/**
 * Takes up to `limit` letters whose alert is due (of `workflowId`, or of all when null), oldest first,
 * clearing it in the same statement; returns only those still `new`.
 */
export const takeDueAlertsSql = (
	store: Store,
	input: { limit: number; workflowId: string | null },
): SqlQuery => ({
	text: `
WITH due AS (
	SELECT id FROM ${store.table('dead_letters')}
	WHERE alert_due IS NOT NULL AND ($2::text IS NULL OR workflow_id = $2)
	ORDER BY alert_due, id LIMIT $1 FOR UPDATE SKIP LOCKED
), cleared AS (
	UPDATE ${store.table('dead_letters')} d SET alert_due = NULL FROM due WHERE d.id = due.id
	RETURNING d.id, d.workflow_id, d.workflow_name, d.execution_id, d.step, d.item_index,
	          d.idempotency_key, d.run_link, d.error_class, d.error_message, d.already_happened,
	          d.impact, d.owner, d.severity, d.status, d.attempt_history
)
SELECT id, workflow_id, workflow_name, execution_id, step, item_index, idempotency_key, run_link,
       error_class, error_message, already_happened, impact, owner, severity, status, attempt_history
FROM cleared WHERE status = 'new' ORDER BY id`,
	values: [input.limit, input.workflowId],
});

/**
 * Up to `limit` open letters that no alert took, unchanged for `graceSeconds` (of `workflowId`,
 * or of all when null), oldest first; read, not taken. A letter of an execution whose items an inbox kept
 * is left to the inbox's own letter.
 */
export const unalertedLettersSql = (
	store: Store,
	input: { limit: number; graceSeconds: number; workflowId: string | null },
): SqlQuery => ({
	text: `
SELECT d.id, d.workflow_id, d.workflow_name, d.execution_id, d.step, d.item_index, d.idempotency_key,
       d.run_link, d.error_class, d.error_message, d.already_happened, d.impact, d.owner, d.severity,
       d.status, d.attempt_history
FROM ${store.table('dead_letters')} d
WHERE d.status = 'new' AND d.parked_at > now() - interval '1 day'
  AND d.issue_id IS NULL AND d.alert_due IS NULL
  AND d.updated_at < now() - make_interval(secs => $2)
  AND ($3::text IS NULL OR d.workflow_id = $3)
  AND (d.execution_id IS NULL OR d.idempotency_key LIKE 'event:%' OR NOT EXISTS (
      SELECT 1 FROM ${store.table('processed_events')} p
      WHERE (p.execution_id = d.execution_id OR p.origin_execution_id = d.execution_id)
        AND (p.payload IS NOT NULL OR p.payload_bytes IS NOT NULL)))
ORDER BY d.parked_at, d.id LIMIT $1`,
	values: [input.limit, input.graceSeconds, input.workflowId],
});
