import type { SqlQuery, Store } from '../../store';
import type { WorkflowAudit } from '../types';

/**
 * The audit's statements: each takes its values bound, and only the schema-qualified table name
 * is spliced in.
 */

/**
 * Saves the `audits` given (workflow_id, workflow_name, active, score, checklist, inventory,
 * findings, accepted), each replacing the workflow's earlier one.
 */
export const saveAuditsSql = (
	store: Store,
	input: {
		audits: Array<{
			workflow_id: string;
			workflow_name: WorkflowAudit['workflowName'];
			active: WorkflowAudit['active'];
			score: WorkflowAudit['score'];
			checklist: WorkflowAudit['checklist'];
			inventory: WorkflowAudit['inventory'];
			findings: WorkflowAudit['findings'];
			accepted: WorkflowAudit['accepted'];
		}>;
	},
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('workflow_audits')} AS a
	(workflow_id, workflow_name, active, score, checklist, inventory, findings, accepted, audited_at)
SELECT t.workflow_id, t.workflow_name, t.active, t.score, t.checklist, t.inventory, t.findings, t.accepted, now()
FROM json_to_recordset($1::json) AS t(workflow_id text, workflow_name text, active boolean,
	score int, checklist jsonb, inventory jsonb, findings jsonb, accepted jsonb)
ON CONFLICT (workflow_id) DO UPDATE SET workflow_name = EXCLUDED.workflow_name,
	active = EXCLUDED.active, score = EXCLUDED.score, checklist = EXCLUDED.checklist,
	inventory = EXCLUDED.inventory, findings = EXCLUDED.findings, accepted = EXCLUDED.accepted,
	audited_at = EXCLUDED.audited_at`,
	values: [JSON.stringify(input.audits)],
});

/** The last audits, lowest score first; `workflowId`: one workflow's ID, or null for all. */
export const listAuditsSql = (store: Store, input: { workflowId: string | null }): SqlQuery => ({
	text: `
SELECT workflow_id, workflow_name, active, score, checklist, inventory, findings, accepted, audited_at
FROM ${store.table('workflow_audits')}
WHERE $1::text IS NULL OR workflow_id = $1
ORDER BY score, workflow_name NULLS LAST, workflow_id`,
	values: [input.workflowId],
});

/** Forgets the audits of workflows other than those named (`workflowIds`). */
export const forgetOtherAuditsSql = (store: Store, input: { workflowIds: string[] }): SqlQuery => ({
	text: `
DELETE FROM ${store.table('workflow_audits')} WHERE NOT (workflow_id = ANY($1::text[]))`,
	values: [input.workflowIds],
});

/** Open findings of the last audits, by rule and severity. */
export const findingCountsSql = (store: Store): SqlQuery => ({
	text: `
SELECT f->>'rule' AS rule, f->>'severity' AS severity, count(*)::int AS n
FROM ${store.table('workflow_audits')} a, jsonb_array_elements(a.findings) f
GROUP BY 1, 2 ORDER BY 1, 2`,
	values: [],
});
