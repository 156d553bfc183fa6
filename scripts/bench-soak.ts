/**
 * `npm run bench:soak`: the store stays the size of its retention, and purging it costs the live
 * work little. Seeds 30 days of a busy instance plus the day that has just passed its retention
 * (BENCH_ROWS_PER_DAY writes and as many events per day, default 300,000: about 9.3M key records
 * with saved bodies and 9.3M claims), in SQL, with the store's own indexes. Then, in one real n8n,
 * Event Dedupe claims and Idempotent HTTP Write writes (one item per execution, alternating) in
 * rounds: an idle stretch; then while the bundled Housekeeping workflow (its Run Now webhook)
 * purges the expired day; then while a vacuum paced as autovacuum's reclaims the purged rows
 * (before each further round another expired day is seeded and the tables vacuumed, analysed and
 * checkpointed), until BENCH_EXECUTIONS (300) of each ran during purges, at most
 * BENCH_PURGE_ROUNDS (20) rounds; idle then has as many. Reports p50 and p99 of the node's own time
 * in the three phases, each round's purge and vacuum, and the rows before and after.
 */
import { DEFAULT_HOUSEKEEPING } from '../lib/control/housekeeping';
import { installN8n, packPackage } from '../dev/harness/install';
import { startN8n } from '../dev/harness/n8n';
import { DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import { TestTarget } from '../dev/target/server';
import { bundledWorkflows } from '../dev/bundled';
import { packageNode, storeCredential } from '../dev/workflows';
import { measure, openBenchStore, percentile, timedWorkflow, type Timing } from './bench-support';

const DAYS = 30;
const PER_DAY = Number(process.env.BENCH_ROWS_PER_DAY ?? 300_000);
/**
 * Executions of each node timed during purges, at least (the last purge may see more), and as
 * many idle.
 */
const SAMPLES = Number(process.env.BENCH_EXECUTIONS ?? 300);
/**
 * Executions of a node in a row before switching to the other one, in both phases: short, so a
 * purge's phase ends soon after the purge, and the same while idle, so the phases differ in the
 * purge alone (with 25 in a row idle against 5 during, the claims' p50 read 4 ms idle and 6
 * during at rests of 100% and 300% alike; with 5 in both, 4 and 5).
 */
const STRETCH = 5;
/** Idle executions of each node in the first round; later rounds, as many as the last purge saw. */
const FIRST_IDLE_STRETCH = 50;
/**
 * Untimed executions of each node once the tables are settled: the settle outlasts the store
 * pool's idle timeout (30 s), so the first executions after it open connections and fill caches.
 */
const WARM_UP = 25;
/**
 * Purge rounds at most (a fresh expired day is seeded before each after the first): rounds go on
 * until SAMPLES executions of each node ran during purges, so both p99s are the same rank of the
 * same number of samples (with fewer, the p99 during is nearer their maximum).
 */
const MAX_ROUNDS = Number(process.env.BENCH_PURGE_ROUNDS ?? 20);
const HOT_TABLES = ['idempotency_keys', 'processed_events'] as const;
/** Housekeeping's slice size and rest for this run; unset, the bundled workflow's own. */
const SLICE_SIZE = process.env.BENCH_SLICE_SIZE ? Number(process.env.BENCH_SLICE_SIZE) : undefined;
const REST_PERCENT = process.env.BENCH_REST_PERCENT
	? Number(process.env.BENCH_REST_PERCENT)
	: undefined;
type PlainNode = { parameters?: Record<string, unknown> };

/** The two timed workflows, one per node. */
const NODES = {
	claims: { id: 'soakClaim', path: 'soak-claim', prefix: 'live-evt' },
	writes: { id: 'soakWrite', path: 'soak-write', prefix: 'live-order' },
} as const;
type NodeName = keyof typeof NODES;
const NODE_NAMES = Object.keys(NODES) as NodeName[];
/** Node times of both nodes' runs in one phase (the soak judges node times alone). */
type Phase = Record<NodeName, Timing>;
const phase = (): Phase => ({
	claims: { node: [], endToEnd: [], started: [] },
	writes: { node: [], endToEnd: [], started: [] },
});
/** Adds `part`'s node times to `into`, of the runs `counts` keeps by their start. */
const append = (
	into: Phase,
	part: Phase,
	counts: (started: number) => boolean = () => true,
): void => {
	for (const name of NODE_NAMES)
		part[name].started.forEach((started, i) => {
			if (!counts(started)) return;
			into[name].node.push(part[name].node[i]);
			into[name].started.push(started);
		});
};
const fewest = (of: Phase): number => Math.min(...NODE_NAMES.map((name) => of[name].node.length));
/** Asks `load` for `count` executions of each node. */
const each =
	(count: number) =>
	(part: Phase, name: NodeName): number =>
		count - part[name].node.length;
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const fixed = (n: number): number => Number(n.toFixed(1));

/** One row per day and position: `i / PER_DAY` days ago, so the oldest day is past 30 days. */
const seedSql: Record<(typeof HOT_TABLES)[number], (schema: string) => string> = {
	idempotency_keys: (schema) => `
INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, workflow_id,
	execution_id, node, attempts, response_status, response_headers, response_body, created_at,
	updated_at, completed_at, expires_at, item_ref)
SELECT 'soak', 'order-' || i, md5(i::text), 'succeeded', t, 'wfSoak', (1000000 + i)::text, 'Write', 1,
	201, '{"content-type":"application/json"}'::json,
	'{"id":"order-' || i || '","status":"created","contact":{"email":"lead' || i || '@example.com","phone":"0151 ' || i || '"}}',
	t, t, t, t + interval '30 days', 'order-' || i
FROM (SELECT i, now() - (i::float8 / $1) * interval '1 day' AS t FROM generate_series($2::bigint, $3::bigint) i) g`,
	processed_events: (schema) => `
INSERT INTO "${schema}".processed_events (consumer, event_id, status, workflow_id, execution_id,
	claimed_at, lease_until, completed_at, expires_at, completed_by)
SELECT 'soak', 'evt-' || i, 'done', 'wfSoak', (1000000 + i)::text, t, t, t, t + interval '30 days',
	'complete'
FROM (SELECT i, now() - (i::float8 / $1) * interval '1 day' AS t FROM generate_series($2::bigint, $3::bigint) i) g`,
};

interface TableState {
	rows: number;
	expired: number;
	deadTuples: number;
}

async function main(): Promise<void> {
	if (!(SAMPLES > 0 && MAX_ROUNDS > 0))
		throw new Error('BENCH_EXECUTIONS and BENCH_PURGE_ROUNDS must be positive numbers');
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const bench = await openBenchStore('bench_soak');
	const { postgres, schema, admin } = bench;
	const tableState = async (table: string): Promise<TableState> => {
		const { rows } = await admin.query<TableState>(
			`SELECT (SELECT count(*)::int FROM "${schema}".${table}) AS rows,
			        (SELECT count(*)::int FROM "${schema}".${table} WHERE expires_at < now()) AS expired,
			        n_dead_tup::int AS "deadTuples"
			 FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2`,
			[schema, table],
		);
		return rows[0];
	};

	let checkpoints = true;
	/** Flushes what the seeding wrote; a role that may not checkpoint is said so, once. */
	const checkpoint = async () => {
		if (!checkpoints) return;
		try {
			await admin.query('CHECKPOINT');
		} catch (error) {
			if ((error as { code?: string }).code !== '42501') throw error;
			checkpoints = false;
			say(
				"No CHECKPOINT between rounds (it takes a superuser or pg_checkpoint): the seeding's writes may be flushed while a stretch is timed.",
			);
		}
	};
	/**
	 * Leaves the tables as a night's purge meets them: any dead rows vacuumed and the seeded rows'
	 * hint bits set (autovacuum's work between nights; a purge reading unhinted rows would write
	 * every page it reads), statistics fresh, and the seeding's writes flushed by a checkpoint
	 * rather than during the next timed stretch. Unlike a night's, the expired day was written
	 * minutes ago, so its pages are more likely in memory; and no checkpoint of its own falls in a
	 * timed stretch.
	 */
	const settle = async () => {
		for (const table of HOT_TABLES) await admin.query(`VACUUM ANALYZE "${schema}".${table}`);
		await checkpoint();
	};
	const { rows: costs } = await admin.query<{ delay: string; limit: string; plain: string }>(
		`SELECT current_setting('autovacuum_vacuum_cost_delay') AS delay,
		        current_setting('autovacuum_vacuum_cost_limit') AS limit,
		        current_setting('vacuum_cost_limit') AS plain`,
	);
	/**
	 * Vacuums the hot tables as autovacuum would after the purge, paced by autovacuum's cost delay
	 * and limit, so what reclaiming the purged rows costs live work is timed too.
	 */
	const autovacuumLike = async () => {
		await admin.query(`SET vacuum_cost_delay = '${costs[0].delay}'`);
		await admin.query(
			`SET vacuum_cost_limit = ${costs[0].limit === '-1' ? costs[0].plain : costs[0].limit}`,
		);
		try {
			for (const table of HOT_TABLES) await admin.query(`VACUUM "${schema}".${table}`);
		} finally {
			await admin.query('RESET vacuum_cost_delay');
			await admin.query('RESET vacuum_cost_limit');
		}
	};
	const deadRows = async (): Promise<number> => {
		const { rows } = await admin.query<{ dead: number }>(
			`SELECT coalesce(sum(n_dead_tup), 0)::int AS dead FROM pg_stat_user_tables
			 WHERE schemaname = $1 AND relname = ANY($2)`,
			[schema, HOT_TABLES],
		);
		return rows[0].dead;
	};

	let n8n: Awaited<ReturnType<typeof startN8n>> | undefined;
	let target: TestTarget | undefined;
	try {
		say(
			`Seeding ${DAYS + 1} days x ${PER_DAY} key records and ${PER_DAY} claims (the oldest day past its 30-day retention)`,
		);
		const seeded = Date.now();
		for (const table of HOT_TABLES) {
			const began = Date.now();
			// Loading without the secondary indexes and building them afterwards, as a restore does.
			const { rows: indexes } = await admin.query<{ indexname: string; indexdef: string }>(
				`SELECT indexname, indexdef FROM pg_indexes
			 WHERE schemaname = $1 AND tablename = $2 AND indexname <> $2 || '_pkey'`,
				[schema, table],
			);
			for (const index of indexes) await admin.query(`DROP INDEX "${schema}"."${index.indexname}"`);
			for (let day = 0; day <= DAYS; day++)
				await admin.query(seedSql[table](schema), [
					PER_DAY,
					day * PER_DAY,
					(day + 1) * PER_DAY - 1,
				]);
			await admin.query(`SET maintenance_work_mem = '512MB'`);
			for (const index of indexes) await admin.query(index.indexdef);
			say(`${table}: seeded in ${Math.round((Date.now() - began) / 1000)} s`);
		}
		await settle();
		const before = {
			keys: await tableState('idempotency_keys'),
			claims: await tableState('processed_events'),
		};
		say(
			`Seeded in ${Math.round((Date.now() - seeded) / 1000)} s: ${before.keys.rows} key records (${before.keys.expired} expired), ${before.claims.rows} claims (${before.claims.expired} expired)`,
		);

		target = await new TestTarget().start();
		const url = target.route('/orders', { honoursKey: true, latencyMs: 5 });
		// The bundled Housekeeping workflow, its Purge Expired node run with this run's overrides.
		const housekeeping = bundledWorkflows(target.url('/demo')).find(
			(w) => w.id === 'relHousekeeping1',
		);
		const purgeNode = (housekeeping?.nodes as PlainNode[] | undefined)?.find(
			(node) => node.parameters?.operation === 'purgeExpired',
		);
		if (!housekeeping || !purgeNode)
			throw new Error('The bundled Housekeeping workflow has no Purge Expired node');
		purgeNode.parameters = {
			...purgeNode.parameters,
			...(SLICE_SIZE === undefined ? {} : { sliceSize: SLICE_SIZE }),
			...(REST_PERCENT === undefined ? {} : { restPercent: REST_PERCENT }),
		};
		/** What the purge runs with: the workflow's parameters, else the node's defaults. */
		const purgeWith = {
			slice_size: purgeNode.parameters.sliceSize ?? DEFAULT_HOUSEKEEPING.sliceSize,
			rest_percent: purgeNode.parameters.restPercent ?? DEFAULT_HOUSEKEEPING.restPercent,
		};
		const flows = [
			timedWorkflow('soakClaim', 'soak-claim', {
				...packageNode('eventDedupe', 'Timed', {
					operation: 'claim',
					eventId: '={{ $json.id }}',
					consumer: 'soak',
				}),
			}),
			timedWorkflow('soakWrite', 'soak-write', {
				...packageNode('idempotentHttpWrite', 'Timed', {
					method: 'POST',
					url,
					keyMode: 'custom',
					customKey: '={{ $json.id }}',
					jsonBody: '={{ $json }}',
				}),
			}),
			housekeeping,
		];
		n8n = await startN8n({
			install: await installN8n(version),
			tarball: await packPackage(),
			credentials: [storeCredential(schema, postgres.settings)],
			workflows: flows,
			activate: flows.map((w) => w.id),
		});
		const api = n8n.api;
		let serial = 0;
		const body = (prefix: string) => () => ({ id: `${prefix}-${serial++}` });
		/**
		 * Claims and writes, up to STRETCH of one node and then of the other, for as long as
		 * `wanted` asks for more of either (how many more runs of that node).
		 */
		const load = async (wanted: (part: Phase, name: NodeName) => number) => {
			const part = phase();
			for (let ran = true; ran;) {
				ran = false;
				for (const name of NODE_NAMES) {
					const count = Math.min(STRETCH, wanted(part, name));
					if (count <= 0) continue;
					const { id, path, prefix } = NODES[name];
					const timed = await measure(api, id, path, count, 1, body(prefix));
					part[name].node.push(...timed.node);
					part[name].started.push(...timed.started);
					ran = true;
				}
			}
			return part;
		};

		// Warm pools, credentials and first-use checks before anything is timed.
		await load(each(WARM_UP));

		// Idle and purge phases take turns, round after round, so the machine's drift over the run
		// falls on both: each round times an idle stretch (of each node, as many executions as the
		// last purge saw, FIRST_IDLE_STRETCH in the first), then a purge of a day, timing the
		// executions whose node started before the purge answered ("during", its rests included),
		// then the vacuum that reclaims the purged rows, paced as autovacuum paces it, timing the
		// executions started before it ended (until SAMPLES of each; later rounds' vacuums run
		// untimed in the settle). Before each further round a fresh expired day is seeded, the
		// tables settled and the pools warmed again, so each round starts as the first did.
		const idle = phase();
		const during = phase();
		const vacuuming = phase();
		/** Runs the load while `work` runs, adding to `into` the runs started before it ended. */
		const beside = async <T>(work: Promise<T>, into: Phase) => {
			let ended: number | undefined;
			const finished = work.finally(() => {
				ended = Date.now();
			});
			const began = Date.now();
			const part = await load(() => (ended === undefined ? STRETCH : 0));
			const result = await finished;
			const counted = phase();
			append(counted, part, (started) => started < ended!);
			append(into, counted);
			return { result, ms: ended! - began, counted };
		};
		const rounds: string[] = [];
		const stretch = { claims: FIRST_IDLE_STRETCH, writes: FIRST_IDLE_STRETCH };
		for (let round = 0; round < MAX_ROUNDS && fewest(during) < SAMPLES; round++) {
			if (round > 0) {
				for (const table of HOT_TABLES)
					await admin.query(seedSql[table](schema), [
						PER_DAY,
						(DAYS + round) * PER_DAY,
						(DAYS + round + 1) * PER_DAY - 1,
					]);
				await settle();
				await load(each(WARM_UP));
			}
			append(idle, await load((part, name) => stretch[name] - part[name].node.length));
			const purge = await beside(api.webhook('reliability-housekeeping', {}), during);
			if (purge.result.status !== 200)
				throw new Error(
					`Housekeeping answered ${purge.result.status}: ${JSON.stringify(purge.result.body)}`,
				);
			for (const name of NODE_NAMES)
				stretch[name] = Math.max(STRETCH, purge.counted[name].node.length);
			const deleted = (purge.result.body as { deleted?: unknown }).deleted;
			let line = `Round ${round + 1}: the purge ${fixed(purge.ms / 1000)} s, deleted ${JSON.stringify(deleted)}, ${fewest(purge.counted)} executions of each node during it`;
			if (fewest(vacuuming) < SAMPLES) {
				const dead = await deadRows();
				const vacuum = await beside(autovacuumLike(), vacuuming);
				line += `; its vacuum ${fixed(vacuum.ms / 1000)} s (${dead} dead rows), ${fewest(vacuum.counted)} executions of each during it`;
			}
			rounds.push(line);
		}
		const after = {
			keys: await tableState('idempotency_keys'),
			claims: await tableState('processed_events'),
		};

		// The last purge may have seen more executions of a node than the idle stretch before it:
		// idle makes up the difference on tables settled as before every stretch. Where idle has
		// more, its first runs are left out, so the p99s of idle and during the purge are the same
		// rank of the same number of samples.
		const short = (name: NodeName) => during[name].node.length - idle[name].node.length;
		if (NODE_NAMES.some((name) => short(name) > 0)) {
			await settle();
			await load(each(WARM_UP));
			append(idle, await load((part, name) => short(name) - part[name].node.length));
		}
		for (const name of NODE_NAMES) {
			const extra = -short(name);
			if (extra > 0)
				for (const list of ['node', 'started'] as const) idle[name][list].splice(0, extra);
		}
		if (fewest(idle) === 0 || fewest(during) === 0 || fewest(vacuuming) === 0)
			throw new Error('A phase timed no executions: no ratio to report');

		const row = (name: string, phase: string, t: Timing) =>
			`| ${name} | ${phase} | ${t.node.length} | ${fixed(percentile(t.node, 50))} | ${fixed(percentile(t.node, 99))} |`;
		say('');
		for (const line of rounds) say(line);
		say('');
		say('| node | phase | executions | node p50 (ms) | node p99 (ms) |');
		say('|---|---|---:|---:|---:|');
		for (const [label, name] of [
			['Event Dedupe claim', 'claims'],
			['Idempotent HTTP Write', 'writes'],
		] as const) {
			say(row(label, 'idle', idle[name]));
			say(row(label, 'during the purge', during[name]));
			say(row(label, 'during its vacuum', vacuuming[name]));
		}
		say('');
		say('| table | rows before | expired before | rows after | expired after | dead rows after |');
		say('|---|---:|---:|---:|---:|---:|');
		for (const [name, key] of [
			['idempotency_keys', 'keys'],
			['processed_events', 'claims'],
		] as const)
			say(
				`| ${name} | ${before[key].rows} | ${before[key].expired} | ${after[key].rows} | ${after[key].expired} | ${after[key].deadTuples} |`,
			);
		/** The worse of the two nodes' p99 in `of` over idle. */
		const ratio = (of: Phase) =>
			Number(
				Math.max(
					...NODE_NAMES.map(
						(name) => percentile(of[name].node, 99) / percentile(idle[name].node, 99),
					),
				).toFixed(2),
			);
		say('');
		say(
			JSON.stringify({
				bench: 'soak',
				p99_during_purge_vs_idle: ratio(during),
				p99_during_vacuum_vs_idle: ratio(vacuuming),
				rows_after: after.keys.rows + after.claims.rows,
				...purgeWith,
			}),
		);
	} finally {
		await n8n?.stop();
		await target?.stop();
		await bench.close();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`bench:soak failed: ${error instanceof Error ? error.stack : String(error)}\n`,
	);
	process.exit(1);
});
