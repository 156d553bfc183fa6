import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';
import { nodeKey, type WorkflowBody } from './body';
import type { ApiWorkflow, WorkflowNode } from './plan';

/**
 * A three-way merge of one bundled workflow: what Setup wrote last time (its record), what is in
 * n8n now, and what this version of the package ships. A node nobody changed since Setup wrote
 * it takes the package's version; a node a person changed keeps their parameters (their Slack
 * channel, their CRM's URL), and the report says so, and says too when the package changed that
 * node as well. A person who added, removed or reconnected nodes made the workflow theirs: Setup
 * leaves it as it is and says what it did not apply. Credentials, enabled alert channels and
 * positions are kept by the body itself (body.ts).
 */

/** What Setup wrote for one bundled workflow, as the store keeps it (records.ts). */
export interface SetupRecord {
	bundledId: string;
	workflowId: string;
	/** Node key (type and name) -> fingerprint of the parameters written; `settings` under its own key. */
	nodes: Record<string, string>;
	/** Fingerprint of the connections written. */
	connections: string;
	published: boolean;
}

const SETTINGS = '\u001fsettings';

const fingerprint = (value: unknown): string =>
	createHash('sha256')
		.update(canonicalJson(value ?? {}))
		.digest('hex');

/** The fingerprints of a workflow as written: what the next Setup compares n8n's copy with. */
export function fingerprints(body: WorkflowBody): Pick<SetupRecord, 'nodes' | 'connections'> {
	return {
		nodes: {
			...Object.fromEntries(
				body.nodes.map((node) => [nodeKey(node), fingerprint(node.parameters)]),
			),
			[SETTINGS]: fingerprint(body.settings),
		},
		connections: fingerprint(body.connections),
	};
}

export interface Merged {
	/** The body to write, or undefined when the workflow is left as it is in n8n. */
	body?: WorkflowBody;
	/** What the next Setup compares with: kept nodes keep the fingerprint of what Setup wrote. */
	record: Pick<SetupRecord, 'nodes' | 'connections'>;
	/** What was kept from n8n's copy instead of the package's, one line each. */
	kept: string[];
}

const sameKeys = (a: string[], b: string[]) =>
	a.length === b.length && [...a].sort().join('\u0001') === [...b].sort().join('\u0001');

/**
 * Merges the package's body with n8n's current copy. Without a record (a workflow Setup did not
 * write: a CLI or file import) every difference counts as a person's change, so nothing they set
 * is lost; `overwrite` takes the package's version of everything but credentials.
 */
export function mergeWorkflow(
	next: WorkflowBody,
	current: ApiWorkflow | undefined,
	last: SetupRecord | undefined,
	overwrite: boolean,
): Merged {
	const written = fingerprints(next);
	if (!current || overwrite) return { body: next, record: written, kept: [] };
	const base = last ?? written;
	const currentNodes = current.nodes ?? [];
	const baseKeys = Object.keys(base.nodes).filter((key) => key !== SETTINGS);
	const restructured =
		!sameKeys(currentNodes.map(nodeKey), baseKeys) ||
		fingerprint(current.connections) !== base.connections;
	if (restructured) {
		const changed =
			!sameKeys(Object.keys(written.nodes), Object.keys(base.nodes)) ||
			written.connections !== base.connections ||
			Object.entries(written.nodes).some(([key, print]) => base.nodes[key] !== print);
		return {
			record: base,
			kept: [
				`the workflow: its nodes or connections were changed in n8n, so Setup left it as it is${changed ? '; this version of the package changes it: compare it with the bundled file, or run Setup with Overwrite Changes' : ''}`,
			],
		};
	}
	const byKey = new Map(currentNodes.map((node) => [nodeKey(node), node]));
	const kept: string[] = [];
	const record = { nodes: { ...written.nodes }, connections: written.connections };
	const nodes = next.nodes.map((node): WorkflowNode => {
		const key = nodeKey(node);
		const now = byKey.get(key)!;
		if (fingerprint(now.parameters) === base.nodes[key]) return node;
		record.nodes[key] = base.nodes[key];
		kept.push(
			`${node.name}: your parameters${written.nodes[key] !== base.nodes[key] ? '; this version of the package changes this node too: compare it with the bundled file, or run Setup with Overwrite Changes' : ''}`,
		);
		return { ...node, parameters: now.parameters };
	});
	let settings = next.settings;
	const currentSettings = current.settings;
	// Only the settings Setup writes are compared: n8n adds its own (binaryMode, callerPolicy).
	const compared =
		currentSettings &&
		Object.fromEntries(Object.keys(next.settings).map((key) => [key, currentSettings[key]]));
	if (currentSettings && fingerprint(compared) !== base.nodes[SETTINGS]) {
		record.nodes[SETTINGS] = base.nodes[SETTINGS];
		kept.push(
			`the workflow's settings${written.nodes[SETTINGS] !== base.nodes[SETTINGS] ? '; this version of the package changes them too' : ''}`,
		);
		settings = currentSettings;
	}
	return { body: { ...next, nodes, settings }, record, kept };
}
