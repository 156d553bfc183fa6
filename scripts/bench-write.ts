/**
 * `npm run bench:write`: in one real n8n, against the same local test target (which answers
 * after BENCH_TARGET_LATENCY_MS, default 20 ms, like a fast API), 1000 live writes through n8n's
 * HTTP Request node, 1000 through Idempotent HTTP Write, and 1000 replays of already-succeeded
 * keys through Idempotent HTTP Write. Time is each node's own execution time in n8n's run data
 * (median of the repeats). Prints items per second for each, and last a JSON line.
 */
import type { Execution } from '../dev/harness/rest';
import { installN8n, packPackage } from '../dev/harness/install';
import { startN8n } from '../dev/harness/n8n';
import { DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import { httpRequestNode, median, openBenchStore } from './bench-support';
import { TestTarget } from '../dev/target/server';
import {
	codeNode,
	connect,
	packageNode,
	storeCredential,
	trigger,
	webhookNode,
	workflow,
} from '../dev/workflows';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 1000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LATENCY_MS = Number(process.env.BENCH_TARGET_LATENCY_MS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const say = (line: string): void => void process.stdout.write(`${line}\n`);

const makeItems = codeNode(
	'Make Items',
	'const { count, prefix } = $input.first().json.body;\nreturn Array.from({ length: count }, (_, i) => ({ json: { id: `${prefix}${i}`, name: `Lead ${i}`, email: `lead${i}@example.com` } }));',
);

function workflows(url: string) {
	return [
		workflow(
			'benchHttpRequest',
			'Bench: HTTP Request node',
			[webhookNode('bench-http-request'), makeItems, httpRequestNode('Timed', url, [520, 0])],
			connect(['Webhook', 'Make Items'], ['Make Items', 'Timed']),
		),
		workflow(
			'benchIdempotentWrite',
			'Bench: Idempotent HTTP Write',
			[
				webhookNode('bench-idempotent-write'),
				makeItems,
				packageNode(
					'idempotentHttpWrite',
					'Timed',
					{
						method: 'POST',
						url,
						integration: 'bench',
						keyMode: 'custom',
						customKey: '={{ $json.id }}',
						jsonBody: '={{ $json }}',
						retries: { concurrency: CONCURRENCY },
					},
					[520, 0],
				),
			],
			connect(['Webhook', 'Make Items'], ['Make Items', 'Timed']),
		),
	];
}

const nodeTime = (run: Execution, expectItems: number): number => {
	if (run.status !== 'success')
		throw new Error(
			`run ${run.id} failed: ${JSON.stringify(run.data.resultData.error ?? run.data.resultData.runData.Timed?.[0]?.error)}`,
		);
	const node = run.data.resultData.runData.Timed[0];
	const out = node.data?.main[0]?.length ?? 0;
	if (out !== expectItems)
		throw new Error(`run ${run.id}: expected ${expectItems} successful items, got ${out}`);
	return node.executionTime;
};

async function main(): Promise<void> {
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const bench = await openBenchStore('bench_write');
	const { postgres, schema } = bench;
	const target = await new TestTarget().start();
	const url = target.route('/contacts', { honoursKey: true, latencyMs: LATENCY_MS });
	const flows = workflows(url);

	say(
		`n8n ${version}; target answers after ${LATENCY_MS} ms; ${ITEMS} items per run; Idempotent HTTP Write concurrency ${CONCURRENCY}; median of ${REPEATS} runs`,
	);
	const n8n = await startN8n({
		install: await installN8n(version),
		tarball: await packPackage(),
		credentials: [storeCredential(schema, postgres.settings)],
		workflows: flows,
		activate: flows.map((w) => w.id),
	});
	try {
		const http: number[] = [];
		const live: number[] = [];
		const replay: number[] = [];
		for (let i = 0; i < REPEATS; i++) {
			http.push(
				nodeTime(
					await trigger(n8n, 'benchHttpRequest', 'bench-http-request', {
						count: ITEMS,
						prefix: `http${i}-`,
					}),
					ITEMS,
				),
			);
			live.push(
				nodeTime(
					await trigger(n8n, 'benchIdempotentWrite', 'bench-idempotent-write', {
						count: ITEMS,
						prefix: `live${i}-`,
					}),
					ITEMS,
				),
			);
			const before = target.effects.length;
			replay.push(
				nodeTime(
					await trigger(n8n, 'benchIdempotentWrite', 'bench-idempotent-write', {
						count: ITEMS,
						prefix: `live${i}-`,
					}),
					ITEMS,
				),
			);
			if (target.effects.length !== before) throw new Error('a replay reached the target');
		}
		const effects = target.effects.length;
		if (effects !== 2 * ITEMS * REPEATS)
			throw new Error(`expected ${2 * ITEMS * REPEATS} effects at the target, found ${effects}`);
		const rate = (ms: number): number => Math.round((ITEMS / Math.max(ms, 1)) * 1000);
		const rows: Array<[string, number]> = [
			['n8n HTTP Request node, live writes', median(http)],
			['Idempotent HTTP Write, live writes', median(live)],
			['Idempotent HTTP Write, replays of succeeded keys', median(replay)],
		];
		say('');
		say('| run | node time (ms) | items per second |');
		say('|---|---:|---:|');
		for (const [name, ms] of rows) say(`| ${name} | ${ms} | ${rate(ms)} |`);
		say('');
		say(
			JSON.stringify({
				bench: 'write',
				live_vs_http_request: Number((median(http) / Math.max(median(live), 1)).toFixed(2)),
				replay_vs_live: Number((median(live) / Math.max(median(replay), 1)).toFixed(1)),
			}),
		);
	} finally {
		await n8n.stop();
		await target.stop();
		await bench.close();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`bench:write failed: ${error instanceof Error ? error.stack : String(error)}\n`,
	);
	process.exit(1);
});
