import type { Store } from '../store';
import { findingCountsSql, forgetOtherAuditsSql, listAuditsSql, saveAuditsSql } from './sql';
import type { WorkflowAudit } from './types';

/** A workflow's last audit as the store keeps it. */
export interface SavedAudit extends WorkflowAudit {
	/** The key it is kept under: its ID, or `name:<name>` for a workflow exported without one. */
	savedId: string;
	auditedAt: Date;
}

/**
 * The last audit of each workflow, kept in the store for the console and the metrics. An audit
 * of the whole instance (every workflow in one run) also forgets the workflows no longer there.
 */
export async function saveAudits(
	store: Store,
	audits: WorkflowAudit[],
	options: { wholeInstance: boolean },
): Promise<void> {
	// One row per workflow: the same workflow twice in the input keeps its last audit.
	const latest = new Map(audits.map((a) => [savedId(a), a]));
	const rows = [...latest.values()].map((a) => ({
		workflow_id: savedId(a),
		workflow_name: a.workflowName,
		active: a.active,
		score: a.score,
		checklist: a.checklist,
		inventory: a.inventory,
		findings: a.findings,
		accepted: a.accepted,
	}));
	await store.transaction(async (tx) => {
		if (rows.length > 0) await tx.query(saveAuditsSql(store, { audits: rows }));
		if (options.wholeInstance)
			await tx.query(forgetOtherAuditsSql(store, { workflowIds: rows.map((r) => r.workflow_id) }));
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

/** The last audits (or one workflow's), lowest score first. */
export async function listAudits(store: Store, workflowId?: string): Promise<SavedAudit[]> {
	const rows = await store.query<{
		workflow_id: string;
		workflow_name: string | null;
		active: boolean;
		score: number;
		checklist: WorkflowAudit['checklist'];
		inventory: WorkflowAudit['inventory'];
		findings: WorkflowAudit['findings'];
		accepted: WorkflowAudit['accepted'];
		audited_at: Date;
	}>(listAuditsSql(store, { workflowId: workflowId ?? null }));
	return rows.map((r) => ({
		savedId: r.workflow_id,
		workflowId: r.workflow_id.startsWith('name:') ? null : r.workflow_id,
		workflowName: r.workflow_name,
		active: r.active,
		score: r.score,
		checklist: r.checklist,
		inventory: r.inventory,
		findings: r.findings,
		accepted: r.accepted,
		auditedAt: r.audited_at,
	}));
}
