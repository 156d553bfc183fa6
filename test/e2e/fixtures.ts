import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import {
	type CredentialFile,
	type N8nInstall,
	type N8nProcess,
	startN8n,
	type WorkflowFile,
} from '../harness/n8n';
import { type PgSettings, pgSettingsFromEnv } from '../harness/postgres';
import { dropSchema, uniqueSchema } from '../helpers/store';

/** Helpers shared by the end-to-end files: the install for a version, credentials, workflow nodes. */
export function installFor(version: string): N8nInstall {
	const raw = process.env[`RELIABILITY_N8N_${version.replace(/\./g, '_')}`];
	if (!raw)
		throw new Error(
			`n8n ${version} was not installed by the global setup (run the e2e project through jest, not a single file outside it)`,
		);
	return JSON.parse(raw) as N8nInstall;
}

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

/** One n8n per describe block, with its own store schema; everything removed afterwards. */
export interface E2eContext {
	n8n: N8nProcess;
	schema: string;
}

export async function startWithPackage(
	version: string,
	label: string,
	workflows: WorkflowFile[],
	extraCredentials: CredentialFile[] = [],
	activate: string[] = workflows.map((w) => w.id),
): Promise<E2eContext> {
	const schema = uniqueSchema(`e2e_${label}`);
	const n8n = await startN8n({
		install: installFor(version),
		tarball: process.env.RELIABILITY_TARBALL,
		credentials: [storeCredential(schema), ...extraCredentials],
		workflows,
		activate,
	});
	return { n8n, schema };
}

/** What a file may set beyond the defaults of startWithPackage. */
export interface E2eStartOptions {
	workflows: WorkflowFile[];
	credentials?: CredentialFile[];
	/** Workflow ids to activate; default all of them. */
	activate?: string[];
	/** Extra environment of n8n (queue mode, its database). */
	env?: Record<string, string>;
	/** The Postgres server the Reliability Store credential points at; default the shared test server. */
	store?: PgSettings;
}

/** startWithPackage with an environment and a store server of the file's choosing. */
export async function startWith(
	version: string,
	label: string,
	options: E2eStartOptions,
): Promise<E2eContext> {
	const schema = uniqueSchema(`e2e_${label}`);
	const n8n = await startN8n({
		install: installFor(version),
		tarball: process.env.RELIABILITY_TARBALL,
		credentials: [storeCredential(schema, options.store), ...(options.credentials ?? [])],
		workflows: options.workflows,
		activate: options.activate ?? options.workflows.map((w) => w.id),
		env: options.env,
	});
	return { n8n, schema };
}

export async function stopAndClean(context: E2eContext | undefined): Promise<void> {
	if (!context) return;
	await context.n8n.stop();
	await dropSchema(context.schema);
	if (!process.env.RELIABILITY_KEEP_RUNS)
		rmSync(context.n8n.userFolder, { recursive: true, force: true });
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
	const before = (await n8n.executions(workflowId)).length;
	const response = await n8n.webhook(path, body, headers);
	if (response.status !== 200) {
		const [latest] = await n8n.executions(workflowId);
		const detail = latest ? (await n8n.execution(latest.id)).data.resultData : undefined;
		throw new Error(
			`webhook ${path} answered ${response.status}: ${JSON.stringify(response.body)}; last execution: ${JSON.stringify({ error: detail?.error?.message, node: detail?.lastNodeExecuted, description: detail?.error?.description })}`,
		);
	}
	const runs = await n8n.waitForExecutions(workflowId, before + 1);
	return runs[runs.length - 1];
}
