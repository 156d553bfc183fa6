/**
 * What every benchmark script shares: a median and percentiles, Postgres with a freshly migrated
 * store schema, and timing executions of a webhook workflow in a real n8n.
 */
import { Client } from 'pg';
import type { Execution, N8nRestClient } from '../dev/harness/rest';
import { codeNode, connect, webhookNode, workflow } from '../dev/workflows';
import { Store } from '../lib/store';
import { clientConfig, ensurePostgres, type RunningPostgres } from '../dev/harness/postgres';

export const median = (values: number[]): number =>
	[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export interface BenchStore {
	postgres: RunningPostgres;
	schema: string;
	/** A plain connection for seeding and cleanup. */
	admin: Client;
	/** Drops the schema and stops what was started. */
	close(): Promise<void>;
}

/** The configured Postgres (or an embedded one) with the store migrated into `<name>_<pid>`. */
export async function openBenchStore(name: string): Promise<BenchStore> {
	const postgres = await ensurePostgres('bench');
	const schema = `${name}_${process.pid}`;
	const admin = new Client(clientConfig(postgres.settings));
	await admin.connect();
	const store = new Store({ ...postgres.settings, ssl: 'disable', schema, maxConnections: 2 });
	await store.ready();
	await store.close();
	return {
		postgres,
		schema,
		admin,
		close: async () => {
			await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
			await admin.end();
			await postgres.stop();
		},
	};
}

export const percentile = (values: number[], p: number): number => {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** n8n's execution list answers at most this many at a time (2.x caps the REST API's limit at 100). */
const BATCH = 100;

export interface Timing {
	node: number[];
	endToEnd: number[];
	/**
	 * When each of `node`'s runs started (epoch ms), in the same order: the order n8n lists the
	 * executions (newest first), not the order `endToEnd` was timed in.
	 */
	started: number[];
}

/** `count` executions of one workflow, `parallel` at a time; node and end-to-end times in ms. */
export async function measure(
	api: N8nRestClient,
	workflowId: string,
	path: string,
	count: number,
	parallel: number,
	body: (i: number) => Record<string, unknown>,
): Promise<Timing> {
	const timing: Timing = { node: [], endToEnd: [], started: [] };
	for (let start = 0; start < count; start += BATCH) {
		const size = Math.min(BATCH, count - start);
		const seen = new Set((await api.executions(workflowId)).map((e) => e.id));
		let next = start;
		const worker = async (): Promise<void> => {
			while (next < start + size) {
				const i = next++;
				const began = performance.now();
				const response = await api.webhook(path, body(i));
				timing.endToEnd.push(performance.now() - began);
				if (response.status !== 200)
					throw new Error(`${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
			}
		};
		await Promise.all(Array.from({ length: parallel }, worker));
		const runs = await waitForNew(api, workflowId, seen, size);
		for (const run of runs) {
			const node = timedRun(await api.execution(run));
			timing.node.push(node.executionTime);
			timing.started.push(node.startTime);
		}
	}
	return timing;
}

async function waitForNew(
	api: N8nRestClient,
	workflowId: string,
	seen: Set<string>,
	size: number,
): Promise<string[]> {
	const deadline = Date.now() + 120_000;
	for (;;) {
		const fresh = (await api.executions(workflowId)).filter(
			(e) => !seen.has(e.id) && !['running', 'new', 'waiting'].includes(e.status),
		);
		if (fresh.length >= size) return fresh.map((e) => e.id);
		if (Date.now() > deadline)
			throw new Error(`only ${fresh.length} of ${size} executions of ${workflowId} finished`);
		await new Promise((r) => setTimeout(r, 300));
	}
}

/** The Timed node's run in an execution that succeeded. */
const timedRun = (run: Execution): { executionTime: number; startTime: number } => {
	const node = run.data.resultData.runData.Timed?.[0];
	if (run.status !== 'success' || !node)
		throw new Error(
			`run ${run.id} failed: ${JSON.stringify(run.data.resultData.error ?? node?.error)}`,
		);
	if (typeof node.startTime !== 'number')
		throw new Error(`run ${run.id}: n8n recorded no start time for the timed node`);
	return node;
};

const makeItem = codeNode('Item', 'return [{ json: $input.first().json.body }];');

/** Webhook -> Item -> Timed, answering with Timed's item so the request times the whole run. */
export function timedWorkflow(id: string, path: string, timed: Record<string, unknown>) {
	const webhook = webhookNode(path);
	return workflow(
		id,
		`Bench latency: ${path}`,
		[
			{
				...webhook,
				parameters: { ...(webhook.parameters as object), responseMode: 'lastNode' },
			},
			makeItem,
			{ ...timed, name: 'Timed', position: [520, 0] },
		],
		connect(['Webhook', 'Item'], ['Item', 'Timed']),
	);
}

/**
 * n8n's HTTP Request node posting `$json` (or the field given) as JSON to `url` with an
 * Idempotency-Key header: the built-in every write benchmark compares Idempotent HTTP Write with.
 */
export const httpRequestNode = (
	name: string,
	url: string,
	position: [number, number],
	item = '$json',
): Record<string, unknown> => ({
	id: `node-${name.replace(/\W/g, '')}`,
	name,
	type: 'n8n-nodes-base.httpRequest',
	typeVersion: 4.2,
	position,
	parameters: {
		method: 'POST',
		url,
		sendHeaders: true,
		headerParameters: { parameters: [{ name: 'Idempotency-Key', value: `={{ ${item}.id }}` }] },
		sendBody: true,
		specifyBody: 'json',
		jsonBody: `={{ ${item} }}`,
		options: {},
	},
});
