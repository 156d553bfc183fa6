import type { Store } from '../../store';

/**
 * The audit's statements: each takes its values bound, and only the schema-qualified table name
 * is spliced in.
 */

/**
 * Saves the audits given as JSON ($1: workflow_id, workflow_name, active, score, checklist,
 * inventory, findings, accepted), each replacing the workflow's earlier one.
 */
export const saveAuditsSql = (store: Store): string => `
INSERT INTO ${store.table('workflow_audits')} AS a
	(workflow_id, workflow_name, active, score, checklist, inventory, findings, accepted, audited_at)
SELECT t.workflow_id, t.workflow_name, t.active, t.score, t.checklist, t.inventory, t.findings, t.accepted, now()
FROM json_to_recordset($1::json) AS t(workflow_id text, workflow_name text, active boolean,
	score int, checklist jsonb, inventory jsonb, findings jsonb, accepted jsonb)
ON CONFLICT (workflow_id) DO UPDATE SET workflow_name = EXCLUDED.workflow_name,
	active = EXCLUDED.active, score = EXCLUDED.score, checklist = EXCLUDED.checklist,
	inventory = EXCLUDED.inventory, findings = EXCLUDED.findings, accepted = EXCLUDED.accepted,
	audited_at = EXCLUDED.audited_at`;

/** The last audits, lowest score first; $1: one workflow's ID, or null for all. */
export const listAuditsSql = (store: Store): string => `
SELECT workflow_id, workflow_name, active, score, checklist, inventory, findings, accepted, audited_at
FROM ${store.table('workflow_audits')}
WHERE $1::text IS NULL OR workflow_id = $1
ORDER BY score, workflow_name NULLS LAST, workflow_id`;

/** Forgets the audits of workflows other than those named ($1: their IDs). */
export const forgetOtherAuditsSql = (store: Store): string => `
DELETE FROM ${store.table('workflow_audits')} WHERE NOT (workflow_id = ANY($1::text[]))`;

/** Open findings of the last audits, by rule and severity. */
export const findingCountsSql = (store: Store): string => `
SELECT f->>'rule' AS rule, f->>'severity' AS severity, count(*)::int AS n
FROM ${store.table('workflow_audits')} a, jsonb_array_elements(a.findings) f
GROUP BY 1, 2 ORDER BY 1, 2`;
