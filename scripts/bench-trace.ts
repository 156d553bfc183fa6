/**
 * `npm run bench:trace [-- --records N]`: with N records in the store (10 million by default,
 * seeded with SQL: half write keys, 40% claims, 10% dead letters with one audit event each),
 * times Trace for a whole event ID and for a part of one, the way the node and the console call
 * it. The store's indexes are dropped while seeding and built again afterwards (as a restore
 * would), then the tables are analysed. The bench tables are unlogged: that changes the writes,
 * not the reads timed here. Prints a table, and last a JSON line; the target is under 1 s.
 */
import { Store } from '../lib/store';
import { traceItem } from '../lib/trace';
import { median, openBenchStore } from './bench-support';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const say = (line: string): void => void process.stdout.write(`${line}\n`);

function recordsArgument(): number {
	const at = process.argv.indexOf('--records');
	const value = at >= 0 ? Number(process.argv[at + 1]) : 10_000_000;
	if (!Number.isInteger(value) || value < 1000)
		throw new Error('--records must be a whole number of at least 1000');
	return value;
}

/** The business ID of item g: every table names its items by it. */
const businessId = (g: number): string => `INV-${String(g).padStart(9, '0')}`;
const idSql = (g: string) => `'INV-' || lpad((${g})::text, 9, '0')`;

async function main(): Promise<void> {
	const records = recordsArgument();
	const keys = Math.floor(records * 0.5);
	const claims = Math.floor(records * 0.4);
	const letters = records - keys - claims;
	const bench = await openBenchStore('bench_trace');
	const { admin, schema } = bench;
	const table = (name: string) => `"${schema}".${name}`;
	const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(0);
	try {
		await admin.query(`SET maintenance_work_mem = '512MB'`);
		const tables = ['processed_events', 'idempotency_keys', 'dead_letters', 'dead_letter_events'];
		// The audit trail references dead_letters: it goes unlogged first.
		for (const name of [
			'dead_letter_events',
			'dead_letters',
			'processed_events',
			'idempotency_keys',
		])
			await admin.query(`ALTER TABLE ${table(name)} SET UNLOGGED`);
		const { rows: indexes } = await admin.query<{ name: string; definition: string }>(
			`SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
			 WHERE i.schemaname = $1 AND i.tablename = ANY($2)
			   AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = $1::regnamespace)`,
			[schema, tables],
		);
		for (const index of indexes) await admin.query(`DROP INDEX "${schema}"."${index.name}"`);

		let started = Date.now();
		say(
			`seeding ${records.toLocaleString('en')} records: ${keys.toLocaleString('en')} write keys, ${claims.toLocaleString('en')} claims, ${letters.toLocaleString('en')} dead letters`,
		);
		// Items 1..keys each have a write key; every item up to `claims` a claim; every fifth item
		// up to 5 x letters a dead letter. A year of history, mostly done.
		await admin.query(
			`INSERT INTO ${table('idempotency_keys')} (scope, key, fingerprint, status, lease_until, workflow_id, execution_id, node,
			   attempts, response_status, response_body, history, created_at, updated_at, completed_at, expires_at)
			 SELECT 'ledger', ${idSql('g')} || ':post', md5(g::text), CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'succeeded' END,
			        t, 'wf-' || (g % 10), (g * 3)::text, 'Post to Ledger', 1, CASE WHEN g % 50 = 0 THEN 422 ELSE 201 END,
			        '{"id":' || g || '}', '[{"attempt":1,"kind":"response","status":201}]'::jsonb, t, t, t, t + interval '400 days'
			 FROM generate_series(1, $1::int) g, LATERAL (SELECT now() - make_interval(secs => (g % 31536000)) AS t) p`,
			[keys],
		);
		say(`  write keys in ${seconds(started)} s`);
		started = Date.now();
		await admin.query(
			`INSERT INTO ${table('processed_events')} (consumer, event_id, status, workflow_id, execution_id, origin_execution_id,
			   claimed_at, lease_until, completed_at, completed_by, expires_at)
			 SELECT 'invoices', ${idSql('g')}, 'done', 'wf-' || (g % 10), (g * 3)::text, (g * 3)::text, t, t, t, 'complete', t + interval '400 days'
			 FROM generate_series(1, $1::int) g, LATERAL (SELECT now() - make_interval(secs => (g % 31536000)) AS t) p`,
			[claims],
		);
		say(`  claims in ${seconds(started)} s`);
		started = Date.now();
		await admin.query(
			`INSERT INTO ${table('dead_letters')} (workflow_id, execution_id, step, item_key, idempotency_key, error_class, error_message,
			   error_status, status, payload, parked_at, closed_at, first_failed_at, last_failed_at, expires_at)
			 SELECT 'wf-' || (g % 10), (g * 15)::text, 'Post to Ledger', 'key:' || ${idSql('g * 5')} || ':post', ${idSql('g * 5')} || ':post',
			        'permanent', 'account closed', 422, CASE WHEN g % 20 = 0 THEN 'new' ELSE 'resolved' END,
			        json_build_object('invoice', ${idSql('g * 5')}), t, CASE WHEN g % 20 = 0 THEN NULL ELSE t + interval '3 hours' END,
			        t, t, t + interval '400 days'
			 FROM generate_series(1, $1::int) g, LATERAL (SELECT now() - make_interval(secs => (g % 31536000)) AS t) p`,
			[letters],
		);
		await admin.query(
			`INSERT INTO ${table('dead_letter_events')} (dead_letter_id, at, actor, to_status, reason)
			 SELECT id, parked_at, 'n8n', 'new', error_message FROM ${table('dead_letters')}`,
		);
		say(`  dead letters in ${seconds(started)} s`);
		started = Date.now();
		for (const index of indexes) await admin.query(index.definition);
		say(`  ${indexes.length} indexes built again in ${seconds(started)} s`);
		started = Date.now();
		for (const name of tables) await admin.query(`VACUUM ANALYZE ${table(name)}`);
		say(`  analysed in ${seconds(started)} s`);

		const store = new Store({
			...bench.postgres.settings,
			ssl: 'disable',
			schema,
			maxConnections: 4,
		});
		try {
			// Items that have a claim, a write key and a dead letter (every fifth), spread over the range.
			const last = Math.min(claims, letters * 5, keys);
			const items = Array.from({ length: REPEATS }, (_, i) => {
				const g = Math.floor((last * (i + 1)) / (REPEATS + 1));
				return Math.max(5, g - (g % 5));
			});
			const time = async (id: string) => {
				const start = performance.now();
				const result = await traceItem(store, id);
				return { ms: performance.now() - start, result };
			};
			await time(businessId(1)); // the pool's first connection is not what is measured
			const exact: number[] = [];
			const part: number[] = [];
			for (const g of items) {
				const whole = await time(businessId(g));
				if (whole.result.entries.length < 3)
					throw new Error(`${businessId(g)}: expected a claim, a key and a dead letter`);
				exact.push(whole.ms);
				// A part, as a person types it: the ID without its last digit, in lower case (ten items).
				const partOf = await time(businessId(g).slice(0, -1).toLowerCase());
				if (partOf.result.entries.length === 0) throw new Error(`${g}: the part matched nothing`);
				part.push(partOf.ms);
			}
			const exactMs = Math.round(median(exact));
			const partMs = Math.round(median(part));
			say('');
			say('| trace | records | median (ms) | slowest (ms) |');
			say('|---|---:|---:|---:|');
			say(
				`| whole event ID | ${records.toLocaleString('en')} | ${exactMs} | ${Math.round(Math.max(...exact))} |`,
			);
			say(
				`| part of an ID | ${records.toLocaleString('en')} | ${partMs} | ${Math.round(Math.max(...part))} |`,
			);
			say('');
			say(JSON.stringify({ bench: 'trace', records, exact_ms: exactMs, part_ms: partMs }));
		} finally {
			await store.close();
		}
	} finally {
		await bench.close();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exitCode = 1;
});
