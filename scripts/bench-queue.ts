/**
 * `npm run bench:queue`: the throughput ceiling of queue mode. One main n8n takes the webhooks and
 * BENCH_WORKERS `n8n worker` processes (default 2, concurrency BENCH_WORKER_CONCURRENCY each) run
 * the executions through Bull on Redis, n8n's own data in a Postgres database of its own, as the
 * queue-mode test runs them. BENCH_ROUNDS rounds (default 5) of BENCH_EXECUTIONS single-event
 * executions (default 400) of Webhook -> Event Dedupe -> Idempotent HTTP Write and as many of
 * Webhook -> Remove Duplicates -> HTTP Request, each pair the same but for the two nodes, against
 * a target answering after BENCH_TARGET_LATENCY_MS. The two paths take turns (ours, built-in,
 * then built-in, ours, ...) so the machine's drift falls on both; each round gives executions per
 * second at saturation (from n8n's own start and stop times of the runs) and their ratio, and the
 * report is the median ratio of the rounds and its spread. An execution n8n itself failed on the
 * built-in path is counted and reported, not a reason to stop; one failed on ours stops the run.
 * Also the store's connections: the most open at once, and the most running a statement at once,
 * read from pg_stat_activity every 100 ms.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { installN8n, packPackage } from '../dev/harness/install';
import { startN8n } from '../dev/harness/n8n';
import { DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import { clientConfig, createDatabase, dropDatabase, queryServer } from '../dev/harness/postgres';
import { deleteRedisKeys, type N8nWorker, queueModeEnv } from '../dev/harness/queue';
import { TestTarget } from '../dev/target/server';
import { connect, packageNode, storeCredential, webhookNode, workflow } from '../dev/workflows';
import { httpRequestNode, openBenchStore } from './bench-support';

const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 10);
/** Webhook calls in flight at once: enough to keep every worker's slots full. */
const SENDERS = Number(process.env.BENCH_SENDERS ?? 32);
const LATENCY_MS = Number(process.env.BENCH_TARGET_LATENCY_MS ?? 5);
/** Executions before the timed ones, so pools, credentials and first-use checks are warm. */
const WARM_UP = 40;
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const fixed = (n: number): number => Number(n.toFixed(1));

/** Webhook -> Event Dedupe -> Idempotent HTTP Write: the safe path. */
const oursFlow = (url: string) =>
	workflow(
		'benchQueueOurs',
		'Bench queue: Event Dedupe -> Idempotent HTTP Write',
		[
			webhookNode('bench-queue-ours'),
			packageNode('eventDedupe', 'Dedupe', {
				operation: 'claim',
				eventId: '={{ $json.body.id }}',
				consumer: 'bench-queue',
			}),
			packageNode(
				'idempotentHttpWrite',
				'Write',
				{
					method: 'POST',
					url,
					integration: 'bench-queue',
					keyMode: 'custom',
					customKey: '={{ $json.body.id }}',
					jsonBody: '={{ $json.body }}',
				},
				[520, 0],
			),
		],
		connect(['Webhook', 'Dedupe'], ['Dedupe', 'Write', 0]),
	);

/** Webhook -> Remove Duplicates -> HTTP Request: n8n's own nodes on the same work. */
const builtinFlow = (url: string) =>
	workflow(
		'benchQueueBuiltin',
		'Bench queue: Remove Duplicates -> HTTP Request',
		[
			webhookNode('bench-queue-builtin'),
			{
				id: 'node-Dedupe',
				name: 'Dedupe',
				type: 'n8n-nodes-base.removeDuplicates',
				typeVersion: 2,
				position: [260, 0],
				parameters: {
					operation: 'removeItemsSeenInPreviousExecutions',
					logic: 'removeItemsWithAlreadySeenKeyValues',
					dedupeValue: '={{ $json.body.id }}',
					options: { scope: 'workflow', historySize: 10_000 },
				},
			},
			httpRequestNode('Write', url, [520, 0], '$json.body'),
		],
		connect(['Webhook', 'Dedupe'], ['Dedupe', 'Write']),
	);

/** The store's connections now: open, and running a statement. */
async function storeConnections(probe: Client): Promise<{ open: number; active: number }> {
	const { rows } = await probe.query<{ open: number; active: number }>(
		`SELECT count(*)::int AS open, count(*) FILTER (WHERE state = 'active')::int AS active
		 FROM pg_stat_activity WHERE application_name = 'n8n-nodes-reliability' AND pid <> pg_backend_pid()`,
	);
	return rows[0];
}

interface Result {
	perSecond: number;
	seconds: number;
	peakOpen: number;
	peakActive: number;
	/** Executions n8n ended other than in success (counted, on the built-in path only). */
	failed: number;
}

const middle = (values: number[]): number => {
	const sorted = [...values].sort((a, b) => a - b);
	const half = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2;
};

async function main(): Promise<void> {
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const run = randomBytes(4).toString('hex');
	const bench = await openBenchStore('bench_queue');
	const { postgres, schema } = bench;
	const n8nDbName = `n8n_bench_queue_${run}`;
	const n8nDb = await createDatabase(postgres.settings, n8nDbName);
	const redis = { host: '127.0.0.1', port: 6379, prefix: `reliability_bench_${run}` };
	const target = await new TestTarget().start();
	// A route each, so the safe path's effects can be counted exactly.
	const url = target.route('/orders', { honoursKey: true, latencyMs: LATENCY_MS });
	const builtinUrl = target.route('/orders-builtin', { honoursKey: true, latencyMs: LATENCY_MS });
	const flows = [oursFlow(url), builtinFlow(builtinUrl)];
	const probe = new Client(clientConfig(postgres.settings));
	await probe.connect();
	say(
		`n8n ${version} in queue mode: main + ${WORKERS} workers (concurrency ${WORKER_CONCURRENCY} each), ${SENDERS} webhook calls in flight; ${ROUNDS} rounds of ${EXECUTIONS} single-event executions per workflow, the paths taking turns; target answers after ${LATENCY_MS} ms`,
	);
	const n8n = await startN8n({
		install: await installN8n(version),
		tarball: await packPackage(),
		credentials: [storeCredential(schema, postgres.settings)],
		workflows: flows,
		activate: flows.map((w) => w.id),
		env: queueModeEnv(n8nDb, redis),
	});
	const workers: N8nWorker[] = [];
	try {
		for (let i = 0; i < WORKERS; i++)
			workers.push(await n8n.startWorker(`bench-${i}`, { concurrency: WORKER_CONCURRENCY }));

		/** Posts `count` events to `path`, SENDERS at once; a 503 (n8n busy) is posted again. */
		const post = async (path: string, prefix: string, count: number): Promise<void> => {
			let next = 0;
			const sender = async (): Promise<void> => {
				while (next < count) {
					const id = `${prefix}-${next++}`;
					for (let attempt = 1; ; attempt++) {
						const answer = await n8n.api.webhook(path, { id, amount: 10 });
						if (answer.status === 200) break;
						if (answer.status !== 503 || attempt >= 20)
							throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
						await new Promise((resolve) => setTimeout(resolve, 200));
					}
				}
			};
			await Promise.all(Array.from({ length: SENDERS }, sender));
		};

		/**
		 * Waits until `count` executions of the workflow started at or after `since` have ended. A
		 * failed one stops the run unless `failuresAllowed` (the built-in path: n8n's own failure
		 * there is a data point of the comparison, reported with it).
		 */
		const finished = async (
			workflowId: string,
			since: Date,
			count: number,
			failuresAllowed = false,
		) => {
			const deadline = Date.now() + 30 * 60_000;
			for (;;) {
				const [row] = await queryServer<{
					done: number;
					failed: number;
					first: Date | null;
					last: Date | null;
				}>(
					n8nDb,
					`SELECT count(*) FILTER (WHERE status NOT IN ('new', 'running', 'waiting'))::int AS done,
					        count(*) FILTER (WHERE status NOT IN ('new', 'running', 'waiting', 'success'))::int AS failed,
					        min("startedAt") AS first, max("stoppedAt") AS last
					 FROM execution_entity WHERE "workflowId" = $1 AND "createdAt" >= $2`,
					[workflowId, since],
				);
				if (row.failed > 0 && !failuresAllowed)
					throw new Error(`${row.failed} executions of ${workflowId} failed`);
				if (row.done >= count) return row;
				if (Date.now() > deadline)
					throw new Error(`only ${row.done} of ${count} executions of ${workflowId} finished`);
				await new Promise((resolve) => setTimeout(resolve, 250));
			}
		};

		const builtinPath = {
			flowId: 'benchQueueBuiltin',
			path: 'bench-queue-builtin',
			failuresAllowed: true,
		};
		const oursPath = { flowId: 'benchQueueOurs', path: 'bench-queue-ours', failuresAllowed: false };
		const measure = async (
			{ flowId, path, failuresAllowed }: typeof oursPath,
			round: number,
		): Promise<Result> => {
			const since = new Date((await queryServer<{ now: Date }>(n8nDb, 'SELECT now()'))[0].now);
			let peakOpen = 0;
			let peakActive = 0;
			let sampling = true;
			const sampler = (async () => {
				while (sampling) {
					const now = await storeConnections(probe);
					peakOpen = Math.max(peakOpen, now.open);
					peakActive = Math.max(peakActive, now.active);
					await new Promise((resolve) => setTimeout(resolve, 100));
				}
			})();
			await post(path, `run${round}-${flowId}`, EXECUTIONS);
			const row = await finished(flowId, since, EXECUTIONS, failuresAllowed);
			sampling = false;
			await sampler;
			const seconds = (row.last!.getTime() - row.first!.getTime()) / 1000;
			return { perSecond: EXECUTIONS / seconds, seconds, peakOpen, peakActive, failed: row.failed };
		};

		for (const { flowId, path } of [oursPath, builtinPath]) {
			await post(path, `warm-${flowId}`, WARM_UP);
			await finished(flowId, new Date(0), WARM_UP, flowId === builtinPath.flowId);
		}
		const rounds: Array<{ ours: Result; builtin: Result; ratio: number }> = [];
		for (let round = 0; round < ROUNDS; round++) {
			// Ours first in even rounds, the built-in first in odd ones.
			const first = round % 2 === 0 ? oursPath : builtinPath;
			const second = round % 2 === 0 ? builtinPath : oursPath;
			const a = await measure(first, round);
			const b = await measure(second, round);
			const ours = first === oursPath ? a : b;
			const builtin = first === oursPath ? b : a;
			rounds.push({ ours, builtin, ratio: ours.perSecond / builtin.perSecond });
			say(
				`  round ${round + 1}: ours ${fixed(ours.perSecond)}/s, built-in ${fixed(builtin.perSecond)}/s${builtin.failed ? ` (${builtin.failed} failed by n8n)` : ''}, ratio ${rounds[round].ratio.toFixed(2)}`,
			);
		}

		// Every event reached the target once through the safe path: it sent no duplicate.
		const effects = target.effectsOf('/orders').length;
		const expected = ROUNDS * EXECUTIONS + WARM_UP;
		if (effects !== expected)
			throw new Error(`the target saw ${effects} effects of the safe path, expected ${expected}`);
		const ratios = rounds.map((r) => r.ratio);
		const ours = {
			perSecond: middle(rounds.map((r) => r.ours.perSecond)),
			seconds: middle(rounds.map((r) => r.ours.seconds)),
			peakOpen: Math.max(...rounds.map((r) => r.ours.peakOpen)),
			peakActive: Math.max(...rounds.map((r) => r.ours.peakActive)),
		};
		const builtin = {
			perSecond: middle(rounds.map((r) => r.builtin.perSecond)),
			seconds: middle(rounds.map((r) => r.builtin.seconds)),
			peakOpen: Math.max(...rounds.map((r) => r.builtin.peakOpen)),
			peakActive: Math.max(...rounds.map((r) => r.builtin.peakActive)),
			failed: rounds.reduce((n, r) => n + r.builtin.failed, 0),
		};

		say('');
		say(
			'| path (median of the rounds) | executions a round | seconds | executions/s | store connections open (peak) | running a statement (peak) |',
		);
		say('|---|---:|---:|---:|---:|---:|');
		say(
			`| Remove Duplicates -> HTTP Request | ${EXECUTIONS} | ${fixed(builtin.seconds)} | ${fixed(builtin.perSecond)} | ${builtin.peakOpen} | ${builtin.peakActive} |`,
		);
		say(
			`| Event Dedupe -> Idempotent HTTP Write | ${EXECUTIONS} | ${fixed(ours.seconds)} | ${fixed(ours.perSecond)} | ${ours.peakOpen} | ${ours.peakActive} |`,
		);
		say('');
		say(
			`Ratio of executions per second, ours over the built-in's, by round: ${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${middle(ratios).toFixed(2)}, ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)}).${builtin.failed ? ` n8n failed ${builtin.failed} executions of the built-in path.` : ''}`,
		);
		say('');
		say(
			`Pool: at most 10 connections (the credential's Max Connections) per process that runs executions; ${WORKERS} workers opened ${ours.peakOpen} and ran statements on at most ${ours.peakActive} at once.`,
		);
		say('');
		say(
			JSON.stringify({
				bench: 'queue',
				ratio_median: Number(middle(ratios).toFixed(2)),
				ratio_min: Number(Math.min(...ratios).toFixed(2)),
				ratio_max: Number(Math.max(...ratios).toFixed(2)),
				rounds: ROUNDS,
				ours_per_s: fixed(ours.perSecond),
				builtin_per_s: fixed(builtin.perSecond),
				failed_builtin: builtin.failed,
				store_connections: ours.peakOpen,
			}),
		);
	} finally {
		for (const worker of workers) await worker.stop().catch(() => undefined);
		await n8n.stop();
		await target.stop();
		await probe.end();
		await deleteRedisKeys(redis).catch(() => undefined);
		await dropDatabase(postgres.settings, n8nDbName).catch(() => undefined);
		await bench.close();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`bench:queue failed: ${error instanceof Error ? error.stack : String(error)}\n`,
	);
	process.exit(1);
});
