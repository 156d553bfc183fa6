/**
 * `npm run bench:dedupe`: Event Dedupe against n8n's own Remove Duplicates (operation "remove
 * items processed in previous executions", scope workflow) in one real n8n, on runs of 1,000
 * and 10,000 new items with 10,000 IDs already stored; then Event Dedupe alone with 1,000,000
 * and 10,000,000 IDs stored (seeded with SQL). Time is each node's own execution time as n8n
 * records it in the execution's run data, so both nodes are measured the same way. Prints a
 * table, and last a JSON line with the per-item speedup and the cost of a 10M-ID history.
 */
import { installN8n, packPackage } from '../dev/harness/install';
import { type N8nProcess, startN8n } from '../dev/harness/n8n';
import { DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import { median, openBenchStore } from './bench-support';
import {
	codeNode,
	connect,
	storeCredential,
	storeCredentialRef,
	webhookNode,
	workflow,
} from '../dev/workflows';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const BIG_HISTORIES = (process.env.BENCH_HISTORIES ?? '1000000,10000000').split(',').map(Number);
const say = (line: string): void => void process.stdout.write(`${line}\n`);

const makeItems = codeNode(
	'Make Items',
	'const { count, prefix } = $input.first().json.body;\nreturn Array.from({ length: count }, (_, i) => ({ json: { id: `${prefix}${i}` } }));',
);

const OURS = 'benchEventDedupe';
const THEIRS = 'benchRemoveDuplicates';
const workflows = [
	workflow(
		OURS,
		'Bench: Event Dedupe',
		[
			webhookNode('bench-ours'),
			makeItems,
			{
				id: 'node-Dedupe',
				name: 'Dedupe',
				type: 'n8n-nodes-reliability.eventDedupe',
				typeVersion: 1,
				position: [520, 0],
				parameters: { operation: 'claim', eventId: '={{ $json.id }}', consumer: 'bench' },
				credentials: storeCredentialRef,
			},
		],
		connect(['Webhook', 'Make Items'], ['Make Items', 'Dedupe']),
	),
	workflow(
		THEIRS,
		'Bench: Remove Duplicates',
		[
			webhookNode('bench-theirs'),
			makeItems,
			{
				id: 'node-Dedupe',
				name: 'Dedupe',
				type: 'n8n-nodes-base.removeDuplicates',
				typeVersion: 2,
				position: [520, 0],
				parameters: {
					operation: 'removeItemsSeenInPreviousExecutions',
					logic: 'removeItemsWithAlreadySeenKeyValues',
					dedupeValue: '={{ $json.id }}',
					options: { scope: 'workflow', historySize: 1_000_000 },
				},
			},
		],
		connect(['Webhook', 'Make Items'], ['Make Items', 'Dedupe']),
	),
];

let runCounter = 0;

/** Runs one workflow on `count` fresh IDs and returns the Dedupe node's own time in ms. */
async function timedRun(
	n8n: N8nProcess,
	workflowId: string,
	path: string,
	count: number,
	expectNew = true,
): Promise<number> {
	const before = (await n8n.api.executions(workflowId)).length;
	const prefix = `r${++runCounter}-`;
	const response = await n8n.api.webhook(path, { count, prefix });
	if (response.status !== 200) throw new Error(`webhook ${path} answered ${response.status}`);
	const runs = await n8n.api.waitForExecutions(workflowId, before + 1, 600_000);
	const run = runs[runs.length - 1];
	if (run.status !== 'success')
		throw new Error(`${workflowId} run failed: ${JSON.stringify(run.data.resultData.error)}`);
	const node = run.data.resultData.runData.Dedupe[0];
	const kept = node.data?.main[0]?.length ?? 0;
	if (expectNew && kept !== count)
		throw new Error(`${workflowId}: expected ${count} new items, got ${kept}`);
	return node.executionTime;
}

async function main(): Promise<void> {
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const bench = await openBenchStore('bench_dedupe');
	const { postgres, schema, admin } = bench;

	const seed = async (total: number): Promise<void> => {
		const { rows } = await admin.query<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".processed_events WHERE consumer = 'bench'`,
		);
		const have = rows[0].n;
		if (have >= total) return;
		// In slices, so a 10M seed does not build one giant transaction.
		for (let from = have; from < total; from += 1_000_000) {
			const to = Math.min(total, from + 1_000_000);
			await admin.query(
				`INSERT INTO "${schema}".processed_events (consumer, event_id, status, execution_id, claimed_at, lease_until, completed_at, expires_at)
				 SELECT 'bench', 'seed-' || g, 'done', 'seed', now(), now(), now(), now() + interval '30 days' FROM generate_series($1::int + 1, $2::int) g`,
				[from, to],
			);
		}
		await admin.query(`VACUUM ANALYZE "${schema}".processed_events`);
	};

	say(
		`n8n ${version}, Postgres ${postgres.settings.host}:${postgres.settings.port}, ${REPEATS} runs per cell (median)`,
	);
	const install = await installN8n(version);
	const n8n = await startN8n({
		install,
		tarball: await packPackage(),
		credentials: [storeCredential(schema, postgres.settings)],
		workflows,
		activate: workflows.map((w) => w.id),
	});
	const rows: Array<{ node: string; stored: number; items: number; ms: number }> = [];
	try {
		// 10,000 IDs already stored for both nodes: SQL for ours, one run of the node for theirs.
		await seed(10_000);
		await timedRun(n8n, THEIRS, 'bench-theirs', 10_000);
		for (const items of [1_000, 10_000]) {
			for (const [node, id, path] of [
				['Event Dedupe', OURS, 'bench-ours'],
				['Remove Duplicates', THEIRS, 'bench-theirs'],
			] as const) {
				const times: number[] = [];
				for (let i = 0; i < REPEATS; i++) times.push(await timedRun(n8n, id, path, items));
				rows.push({ node, stored: 10_000, items, ms: median(times) });
			}
		}
		for (const stored of BIG_HISTORIES) {
			const started = Date.now();
			await seed(stored);
			say(
				`  seeded ${stored.toLocaleString('en')} IDs in ${((Date.now() - started) / 1000).toFixed(0)} s`,
			);
			const times: number[] = [];
			for (let i = 0; i < REPEATS; i++) times.push(await timedRun(n8n, OURS, 'bench-ours', 10_000));
			rows.push({ node: 'Event Dedupe', stored, items: 10_000, ms: median(times) });
		}
	} finally {
		await n8n.stop();
		await bench.close();
	}

	say('');
	say('| node | IDs stored | items in run | node time (ms) | ms per item |');
	say('|---|---:|---:|---:|---:|');
	for (const row of rows)
		say(
			`| ${row.node} | ${row.stored.toLocaleString('en')} | ${row.items.toLocaleString('en')} | ${row.ms} | ${(row.ms / row.items).toFixed(4)} |`,
		);
	const perItem = (node: string, stored: number, items: number): number => {
		const row = rows.find((r) => r.node === node && r.stored === stored && r.items === items)!;
		return Math.max(row.ms, 1) / row.items;
	};
	const speedup =
		perItem('Remove Duplicates', 10_000, 10_000) / perItem('Event Dedupe', 10_000, 10_000);
	const biggest = Math.max(...BIG_HISTORIES);
	const cost = perItem('Event Dedupe', biggest, 10_000) / perItem('Event Dedupe', 10_000, 10_000);
	say('');
	say(
		JSON.stringify({
			bench: 'dedupe',
			speedup_vs_remove_duplicates: Number(speedup.toFixed(1)),
			cost_10m_vs_10k: Number(cost.toFixed(2)),
		}),
	);
}

main().catch((error: unknown) => {
	process.stderr.write(
		`bench:dedupe failed: ${error instanceof Error ? error.stack : String(error)}\n`,
	);
	process.exit(1);
});
