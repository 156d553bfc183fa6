import { randomUUID } from 'node:crypto';
import type { CredentialFile, N8nProcess, WorkflowFile } from './harness/n8n';
import { type PgSettings, pgSettingsFromEnv } from './harness/postgres';

/**
 * Workflows and credentials as code, for the tests, the benchmarks and the campaign: the
 * Reliability Store credential, n8n nodes (webhook, Code) and this package's nodes, their
 * connections, and a trigger that posts to a webhook and returns the execution it started.
 */
export const STORE_CREDENTIAL_ID = 'reliabilitystore1';

export function storeCredential(
	schema: string,
	settings: PgSettings = pgSettingsFromEnv(),
): CredentialFile {
	return {
		id: STORE_CREDENTIAL_ID,
		name: 'Reliability Store',
		type: 'reliabilityStoreApi',
		data: { ...settings, ssl: 'disable', schema, maxConnections: 10 },
	};
}

export const storeCredentialRef = {
	reliabilityStoreApi: { id: STORE_CREDENTIAL_ID, name: 'Reliability Store' },
};

export function webhookNode(
	path: string,
	position: [number, number] = [0, 0],
): Record<string, unknown> {
	return {
		id: randomUUID(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
	};
}

/** An n8n Code node running `jsCode` once for all items. */
export const codeNode = (name: string, jsCode: string, position: [number, number] = [260, 0]) => ({
	id: `node-${name.replace(/\W/g, '')}`,
	name,
	type: 'n8n-nodes-base.code',
	typeVersion: 2,
	position,
	parameters: { jsCode },
});

export function connect(
	...chain: Array<[from: string, to: string, output?: number]>
): Record<string, unknown> {
	const connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: string; index: number }>> }
	> = {};
	for (const [from, to, output = 0] of chain) {
		connections[from] ??= { main: [] };
		while (connections[from].main.length <= output) connections[from].main.push([]);
		connections[from].main[output].push({ node: to, type: 'main', index: 0 });
	}
	return connections;
}

export function workflow(
	id: string,
	name: string,
	nodes: unknown[],
	connections: Record<string, unknown>,
): WorkflowFile {
	return {
		id,
		name,
		nodes,
		connections,
		active: false,
		settings: { executionOrder: 'v1' },
		pinData: {},
		versionId: randomUUID(),
	};
}

/** A node of this package, wired to the test store credential. */
export function packageNode(
	type:
		| 'eventDedupe'
		| 'deadLetterPark'
		| 'reliabilityControl'
		| 'idempotentHttpWrite'
		| 'transactionalOutbox',
	name: string,
	parameters: Record<string, unknown>,
	position: [number, number] = [260, 0],
): Record<string, unknown> {
	return {
		id: `node-${name.replace(/\W/g, '')}`,
		name,
		type: `n8n-nodes-reliability.${type}`,
		typeVersion: 1,
		position,
		parameters,
		credentials: storeCredentialRef,
	};
}

/** Webhook -> one node: the shape of the small operator workflows the tests drive. */
export function webhookInto(id: string, path: string, node: Record<string, unknown>): WorkflowFile {
	return workflow(
		id,
		`Test: ${path}`,
		[webhookNode(path), node],
		connect(['Webhook', node.name as string]),
	);
}

/** Posts to a workflow's webhook and returns the execution it started, with run data. */
export async function trigger(
	n8n: N8nProcess,
	workflowId: string,
	path: string,
	body: unknown,
	headers: Record<string, string> = {},
) {
	const before = (await n8n.api.executions(workflowId)).length;
	const response = await n8n.api.webhook(path, body, headers);
	if (response.status !== 200) {
		const [latest] = await n8n.api.executions(workflowId);
		const detail = latest ? (await n8n.api.execution(latest.id)).data.resultData : undefined;
		throw new Error(
			`webhook ${path} answered ${response.status}: ${JSON.stringify(response.body)}; last execution: ${JSON.stringify({ error: detail?.error?.message, node: detail?.lastNodeExecuted, description: detail?.error?.description })}`,
		);
	}
	const runs = await n8n.api.waitForExecutions(workflowId, before + 1);
	return runs[runs.length - 1];
}
