import type { Store } from '../store';
import { findingCountsSql, forgetOtherAuditsSql, saveAuditsSql } from './sql';
import type { WorkflowAudit } from './types';

/**
 * The last audit of each workflow, kept in the store for the console and the metrics. An audit
 * of the whole instance (every workflow in one run) also forgets the workflows no longer there.
 */
export async function saveAudits(
	store: Store,
	audits: WorkflowAudit[],
	options: { wholeInstance: boolean },
): Promise<void> {
	const rows = audits.map((a) => ({
		workflow_id: savedId(a),
		workflow_name: a.workflowName,
		active: a.active,
		score: a.score,
		checklist: a.checklist,
		findings: a.findings,
		accepted: a.accepted,
	}));
	await store.transaction(async (tx) => {
		if (rows.length > 0) await tx.query(saveAuditsSql(store), [JSON.stringify(rows)]);
		if (options.wholeInstance)
			await tx.query(forgetOtherAuditsSql(store), [rows.map((r) => r.workflow_id)]);
	});
}

/** A workflow exported without an ID is kept under its name. */
const savedId = (audit: WorkflowAudit): string =>
	audit.workflowId ?? `name:${audit.workflowName ?? 'unnamed'}`;

/** Open findings of the last audits, by rule and severity. */
export async function auditFindingCounts(
	store: Store,
): Promise<Array<{ rule: string; severity: string; n: number }>> {
	return await store.query(findingCountsSql(store));
}
