import { type SetupCredentials, type WorkflowBody, workflowBody } from './body';
import { bundledWorkflowFiles } from './bundledWorkflowFiles';
import { mergeWorkflow, type SetupRecord } from './merge';
import { type ApiWorkflow, findExisting, installOrder, parseBundled } from './plan';
import type { SetupRecords } from './records';

/**
 * Setup: every bundled workflow created or updated in the user's n8n through n8n's public API,
 * in one run. A file import gives each workflow a new ID (so the Execute Workflow nodes point at
 * IDs that do not exist) and drops its settings; a CLI import keeps IDs but leaves every node on
 * a credential that does not exist. Here each workflow is written after the ones it calls, with
 * its references rewired to the IDs n8n gave them, the user's Reliability Store credential on
 * every node that reads the store, its settings kept, and then published in the same order
 * (n8n 2.x refuses to publish a caller before its callees). A second run (an upgrade of the
 * package) updates the same workflows in place, merging: what a person changed in n8n stays
 * (merge.ts), and a workflow someone unpublished stays unpublished.
 *
 * The n8n API and the store of records are injected (the node layer calls n8n with n8n's own
 * *n8n API* credential), so this module knows nothing of n8n's types.
 */

/** n8n's public API, as far as Setup uses it. */
export interface WorkflowApi {
	list(): Promise<ApiWorkflow[]>;
	create(body: WorkflowBody): Promise<ApiWorkflow>;
	update(id: string, body: WorkflowBody): Promise<ApiWorkflow>;
	/** Activates (n8n 2.x: publishes the latest version of) a saved workflow. */
	activate(id: string): Promise<void>;
}

export interface InstallOptions extends SetupCredentials {
	/** What Setup wrote before in this n8n; without it every difference counts as a person's change. */
	records?: SetupRecords;
	/** Take the package's version of every node, also of those a person changed (credentials stay). */
	overwrite?: boolean;
	/** Publish each workflow that has every credential it needs (default true). */
	publish?: boolean;
	/** The bundled workflows' files, by name; default the package's own. */
	files?: Record<string, string>;
}

/** What Setup did with one bundled workflow: one output item each. */
export interface InstalledWorkflow {
	bundledId: string;
	name: string;
	/** The workflow's ID in this n8n. */
	id: string;
	/** `kept`: changed in n8n beyond what Setup merges, so left as it is. */
	action: 'created' | 'updated' | 'kept';
	/**
	 * published (active); `runs when called` for a sub-workflow n8n 1.x runs without activation;
	 * `runs from the editor` for one whose only trigger is a Manual Trigger (the Fire drill):
	 * there is nothing to publish, a person runs it.
	 */
	published: boolean | 'runs when called' | 'runs from the editor';
	/** What a person still has to do before this workflow can be published. */
	needs: string[];
	/** What was kept as it is in n8n rather than taken from the package, one line each. */
	kept: string[];
	/** Why publishing failed, when it did. */
	error?: string;
}

/** A workflow whose only trigger is a Manual Trigger: a person runs it from the editor. */
const runsFromEditor = (workflow: { nodes: Array<{ type: string }> }): boolean => {
	const triggers = workflow.nodes.filter((n) => /trigger$|\.webhook$/i.test(n.type));
	return triggers.length > 0 && triggers.every((n) => n.type === 'n8n-nodes-base.manualTrigger');
};

/** n8n 1.x refuses to activate a workflow that only runs when called, and runs it unactivated. */
const RUNS_WHEN_CALLED = /has no node to start the workflow|no trigger node/i;

/**
 * Creates or updates every bundled workflow, callees first, then publishes them in the same
 * order. A workflow that still needs a credential only a person can make is written but not
 * published, and says what it needs. Returns one record per workflow.
 */
export async function installBundledWorkflows(
	api: WorkflowApi,
	options: InstallOptions,
): Promise<InstalledWorkflow[]> {
	const bundled = installOrder(parseBundled(options.files ?? bundledWorkflowFiles()));
	const records = (await options.records?.read()) ?? new Map<string, SetupRecord>();
	const existing = await api.list();
	// Every match first: a question only a person can answer stops Setup before it writes.
	const matches = bundled.map((workflow) =>
		findExisting(workflow, existing, records.get(workflow.id)?.workflowId),
	);
	const ids = new Map<string, string>();
	const results: InstalledWorkflow[] = [];
	/** Per result: whether n8n had it published before this run, and its record to save. */
	const state = new Map<InstalledWorkflow, { wasActive: boolean; record: SetupRecord }>();
	for (const [index, workflow] of bundled.entries()) {
		const current = matches[index];
		const record = records.get(workflow.id);
		// The record counts only for the workflow it was written for.
		const base = record && current && record.workflowId === current.id ? record : undefined;
		const { body, needs } = workflowBody(workflow, ids, options, current);
		const merged = mergeWorkflow(body, current, base, options.overwrite === true);
		const saved = merged.body
			? current
				? await api.update(current.id, merged.body)
				: await api.create(merged.body)
			: current!;
		ids.set(workflow.id, saved.id);
		const next: SetupRecord = {
			bundledId: workflow.id,
			workflowId: saved.id,
			...merged.record,
			published: base?.published ?? false,
		};
		if (merged.body) await options.records?.save(next);
		const result: InstalledWorkflow = {
			bundledId: workflow.id,
			name: workflow.name,
			id: saved.id,
			action: !current ? 'created' : merged.body ? 'updated' : 'kept',
			published: current?.active === true,
			needs: merged.body ? needs : [],
			kept: merged.kept,
		};
		results.push(result);
		state.set(result, { wasActive: current?.active === true, record: next });
	}
	if (options.publish !== false)
		for (const [index, result] of results.entries()) {
			const { wasActive, record } = state.get(result)!;
			if (result.needs.length) continue;
			if (runsFromEditor(bundled[index])) {
				result.published = 'runs from the editor';
				continue;
			}
			// Published by Setup before and unpublished since: someone turned it off on purpose.
			if (!wasActive && record.published && result.action !== 'created') {
				result.kept.push('unpublished: someone unpublished it in n8n, so Setup left it off');
				continue;
			}
			// A workflow left as it is needs no new version published.
			if (result.action === 'kept') continue;
			try {
				await api.activate(result.id);
				result.published = true;
			} catch (error) {
				const message = error instanceof Error ? error.message : String(error);
				if (RUNS_WHEN_CALLED.test(message)) result.published = 'runs when called';
				else result.error = message;
			}
			// Recorded only when n8n says it is published: 1.x runs a called-only one unpublished.
			if (result.published === true && !record.published) {
				record.published = true;
				await options.records?.save(record);
			}
		}
	return results;
}
