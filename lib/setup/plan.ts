import { ConfigurationError } from '../errors';

/**
 * The bundled workflows as Setup plans them: parsed, each after the workflows it refers to, and
 * matched with the workflow it already is in n8n, if any.
 */

/** A credential as a node refers to it. */
export interface CredentialRef {
	id: string;
	name: string;
}

export interface WorkflowNode {
	name: string;
	type: string;
	parameters?: Record<string, unknown>;
	credentials?: Record<string, CredentialRef>;
	disabled?: boolean;
	position?: unknown;
	[key: string]: unknown;
}

/** A workflow as n8n's public API lists it (what Setup reads of it). */
export interface ApiWorkflow {
	id: string;
	name: string;
	active?: boolean;
	nodes?: WorkflowNode[];
	connections?: Record<string, unknown>;
	settings?: Record<string, unknown>;
}

export interface Bundled {
	id: string;
	name: string;
	nodes: WorkflowNode[];
	connections: Record<string, unknown>;
	settings: Record<string, unknown>;
}

export function parseBundled(files: Record<string, string>): Bundled[] {
	return Object.entries(files).map(([file, text]) => {
		let parsed: Bundled;
		try {
			parsed = JSON.parse(text) as Bundled;
		} catch (error) {
			throw new ConfigurationError(`The bundled workflow ${file} is not JSON`, undefined, {
				cause: error,
			});
		}
		return { ...parsed, settings: parsed.settings ?? {} };
	});
}

/** The workflow an Execute Workflow node calls, when it names one (not an expression's result). */
export function calledWorkflowId(node: WorkflowNode): string | undefined {
	if (!/\.executeWorkflow$/.test(node.type)) return undefined;
	const value = node.parameters?.workflowId;
	if (typeof value === 'string') return value;
	if (
		value &&
		typeof value === 'object' &&
		typeof (value as { value?: unknown }).value === 'string'
	)
		return (value as { value: string }).value;
	return undefined;
}

/** The bundled IDs a workflow refers to: the workflows its Execute Workflow nodes call, and its error workflow. */
function referencesOf(workflow: Bundled, bundledIds: Set<string>): string[] {
	const found = new Set<string>();
	for (const node of workflow.nodes) {
		const target = calledWorkflowId(node);
		if (target !== undefined && bundledIds.has(target)) found.add(target);
	}
	const errorWorkflow = workflow.settings.errorWorkflow;
	if (typeof errorWorkflow === 'string' && bundledIds.has(errorWorkflow)) found.add(errorWorkflow);
	return [...found];
}

/** The bundled workflows, each after every workflow it refers to (callees and error workflows first). */
export function installOrder(workflows: Bundled[]): Bundled[] {
	const byId = new Map(workflows.map((w) => [w.id, w]));
	const ids = new Set(byId.keys());
	const ordered: Bundled[] = [];
	const state = new Map<string, 'visiting' | 'done'>();
	const visit = (workflow: Bundled, path: string[]) => {
		const seen = state.get(workflow.id);
		if (seen === 'done') return;
		if (seen === 'visiting')
			throw new ConfigurationError(
				`The bundled workflows refer to each other in a cycle: ${[...path, workflow.id].join(' → ')}`,
			);
		state.set(workflow.id, 'visiting');
		for (const ref of referencesOf(workflow, ids)) visit(byId.get(ref)!, [...path, workflow.id]);
		state.set(workflow.id, 'done');
		ordered.push(workflow);
	};
	for (const workflow of [...workflows].sort((a, b) => a.name.localeCompare(b.name)))
		visit(workflow, []);
	return ordered;
}

/**
 * The existing workflow a bundled one becomes: the one Setup made before (its record names it),
 * else the one with its bundled ID (a CLI import keeps IDs), else the only one with its name.
 * Two with the name is a question only a person can answer, so Setup stops and says which.
 */
export function findExisting(
	bundled: Bundled,
	existing: ApiWorkflow[],
	recorded?: string,
): ApiWorkflow | undefined {
	const made = recorded === undefined ? undefined : existing.find((w) => w.id === recorded);
	if (made) return made;
	const byId = existing.find((w) => w.id === bundled.id);
	if (byId) return byId;
	const byName = existing.filter((w) => w.name === bundled.name);
	if (byName.length > 1)
		throw new ConfigurationError(
			`${byName.length} workflows are named "${bundled.name}" (IDs ${byName.map((w) => w.id).join(', ')}), so Setup cannot tell which one to update`,
			'Rename or delete the copies you do not want updated, then run Setup again.',
		);
	return byName[0];
}
