import type { Bundled, CredentialRef, WorkflowNode } from './plan';
import { calledWorkflowId } from './plan';

/** What the public API takes to create or replace a workflow. */
export interface WorkflowBody {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<string, unknown>;
	settings: Record<string, unknown>;
}

/** The credentials Setup sets: the store's on every node that reads it, and the user's own. */
export interface SetupCredentials {
	/** The Reliability Store credential every store-reading node gets. */
	store: CredentialRef;
	/** The Basic Auth credential of the operator console's sign-in; without it the console stays unpublished. */
	consoleLogin?: CredentialRef;
	/** The Header Auth credential Prometheus sends to the metrics endpoint; without it Metrics stays unpublished. */
	metricsToken?: CredentialRef;
	/** n8n's own n8n API credential (Setup's), which the weekly audit reads the workflows with. */
	n8nApi?: CredentialRef;
}

/** The store credential as the bundled files ship it; Setup points it at the user's. */
const SHIPPED_STORE_CREDENTIAL = 'reliabilityStoreLocal';

/**
 * Credentials the bundled files refer to that only the user can make (a sign-in, a token), by
 * the placeholder ID the files ship, with the option that supplies them and what to tell a
 * person when it is missing.
 */
const USER_CREDENTIALS: Record<
	string,
	{ option: 'consoleLogin' | 'metricsToken' | 'n8nApi'; need: (node: string) => string }
> = {
	reliabilityConsoleLogin: {
		option: 'consoleLogin',
		need: (node) =>
			`a Basic Auth credential for the console's sign-in on node "${node}": choose it as Setup's Console Login and run Setup again`,
	},
	reliabilityMetricsToken: {
		option: 'metricsToken',
		need: (node) =>
			`a Header Auth credential (the token Prometheus sends) on node "${node}": choose it as Setup's Metrics Token and run Setup again`,
	},
	reliabilityN8nApi: {
		option: 'n8nApi',
		need: (node) =>
			`an n8n API credential on node "${node}": Setup's own n8n API credential is set when Setup runs with it`,
	},
};

/** The node fields n8n's public API accepts when it creates or updates a workflow. */
const NODE_FIELDS = [
	'id',
	'name',
	'type',
	'typeVersion',
	'position',
	'parameters',
	'credentials',
	'disabled',
	'webhookId',
	'notes',
	'notesInFlow',
	'executeOnce',
	'alwaysOutputData',
	'retryOnFail',
	'maxTries',
	'waitBetweenTries',
	'onError',
];

/**
 * A node's identity across versions of a workflow: its type and its name, joined by a unit
 * separator (Postgres keeps it in a jsonb key, where it refuses \u0000).
 */
export const nodeKey = (node: WorkflowNode): string => `${node.type}\u001f${node.name}`;

/**
 * The body Setup writes for one bundled workflow: references rewired to the IDs n8n gave the
 * workflows they name, the store credential set, the user's own credentials set or (when not
 * given) kept from the workflow being updated, and a node the user enabled (an alert channel)
 * left enabled. Returns what is still missing for it to run.
 */
export function workflowBody(
	bundled: Bundled,
	ids: Map<string, string>,
	given: SetupCredentials,
	current?: { nodes?: WorkflowNode[] },
): { body: WorkflowBody; needs: string[] } {
	const needs: string[] = [];
	const currentNodes = new Map((current?.nodes ?? []).map((node) => [nodeKey(node), node]));
	const nodes = bundled.nodes.map((source) => {
		const node: WorkflowNode = structuredClone(
			Object.fromEntries(
				Object.entries(source).filter(([key]) => NODE_FIELDS.includes(key)),
			) as WorkflowNode,
		);
		const before = currentNodes.get(nodeKey(node));
		const target = calledWorkflowId(node);
		if (target !== undefined && ids.has(target)) {
			const value = node.parameters!.workflowId;
			node.parameters!.workflowId =
				typeof value === 'string'
					? ids.get(target)
					: { ...(value as object), value: ids.get(target), mode: 'id' };
		}
		const credentials: Record<string, CredentialRef> = {};
		for (const [type, ref] of Object.entries(node.credentials ?? {})) {
			if (ref.id === SHIPPED_STORE_CREDENTIAL) {
				credentials[type] = { id: given.store.id, name: given.store.name };
				continue;
			}
			const user = USER_CREDENTIALS[ref.id];
			const chosen = user ? given[user.option] : undefined;
			const kept = before?.credentials?.[type];
			if (chosen) credentials[type] = { id: chosen.id, name: chosen.name };
			else if (kept && kept.id !== ref.id) credentials[type] = kept;
			else needs.push(user ? user.need(node.name) : `a ${type} credential on node "${node.name}"`);
		}
		// Credentials the user added to a node the package ships without one (an alert channel).
		for (const [type, ref] of Object.entries(before?.credentials ?? {}))
			if (!(type in credentials) && !(type in (node.credentials ?? {}))) credentials[type] = ref;
		if (Object.keys(credentials).length) node.credentials = credentials;
		else delete node.credentials;
		if (before && node.disabled && before.disabled !== true) node.disabled = false;
		// Where the user moved it on the canvas.
		if (before?.position !== undefined) node.position = before.position;
		return node;
	});
	const settings = { ...bundled.settings };
	if (typeof settings.errorWorkflow === 'string' && ids.has(settings.errorWorkflow))
		settings.errorWorkflow = ids.get(settings.errorWorkflow);
	return {
		body: { name: bundled.name, nodes, connections: bundled.connections, settings },
		needs,
	};
}
