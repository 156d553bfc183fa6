import { closeAllStores, latestMigrationId, migrate, Store } from '../../lib/store';
import { pgSettingsFromEnv } from '../../dev/harness/postgres';
import { type RunningPgBouncer, startPgBouncer } from '../helpers/pgbouncer';
import { adminQuery, dropSchema, storeConfig, uniqueSchema } from '../helpers/store';

/**
 * The store behind PgBouncer in transaction mode, the pooler Supabase and Neon put in front of
 * Postgres: a transaction's statements share one server connection, nothing else does.
 */
let bouncer: RunningPgBouncer;
const schemas: string[] = [];
const newSchema = (label: string): string => {
	const schema = uniqueSchema(label);
	schemas.push(schema);
	return schema;
};

beforeAll(async () => {
	// Fewer server connections than clients, so the ten stores share them as a busy pooler does.
	bouncer = await startPgBouncer(pgSettingsFromEnv(), { poolSize: 4 });
});

afterAll(async () => {
	await closeAllStores();
	await bouncer?.stop();
	for (const schema of schemas) await dropSchema(schema);
});

const withinSeconds = async <T>(seconds: number, work: Promise<T>): Promise<T> => {
	let timer: NodeJS.Timeout | undefined;
	try {
		return await Promise.race([
			work,
			new Promise<never>((_, reject) => {
				timer = setTimeout(
					() => reject(new Error(`did not finish within ${seconds} s`)),
					seconds * 1000,
				);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
};

describe('behind PgBouncer in transaction mode', () => {
	it('ten processes using a new schema at once all succeed, migrate once and leave no lock', async () => {
		const schema = newSchema('pooler10');
		// Ten separate pools, as ten n8n workers starting at the same moment would have.
		const stores = Array.from(
			{ length: 10 },
			() => new Store(storeConfig(schema, bouncer.settings)),
		);
		let runs: PromiseSettledResult<number[]>[];
		try {
			runs = await withinSeconds(
				30,
				Promise.allSettled(stores.map((store) => migrate(store.pool, schema))),
			);
			await Promise.all(stores.map((store) => store.ready()));
			const counts = await Promise.all(
				stores.map((store) =>
					store.query<{ n: number }>(
						`SELECT count(*)::int AS n FROM ${store.table('processed_events')}`,
					),
				),
			);
			expect(counts.map((rows) => rows[0].n)).toEqual(Array(10).fill(0));
		} finally {
			await Promise.all(stores.map((store) => store.close()));
		}

		expect(runs.filter((run) => run.status === 'rejected')).toEqual([]);
		const allIds = Array.from({ length: latestMigrationId() }, (_, i) => i + 1);
		const applied = runs.map((run) => (run.status === 'fulfilled' ? run.value : []));
		expect(applied.filter((ids) => ids.length > 0)).toEqual([allIds]);
		const rows = await adminQuery<{ id: number }>(
			`SELECT id FROM "${schema}".migrations ORDER BY id`,
		);
		expect(rows.map((row) => row.id)).toEqual(allIds);

		// The pooler's server connections stay open after the clients left: a session lock taken
		// through one of them would still show here.
		const locks = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM pg_locks
			  WHERE locktype = 'advisory'
			    AND ((classid::bigint << 32) | objid::bigint) = hashtext('n8n_reliability.migrate:' || $1::text)::bigint`,
			[schema],
		);
		expect(locks[0].n).toBe(0);
	});

	it('a store through the pooler checks the schema once, then sends nothing before its work', async () => {
		const schema = newSchema('pooler_ready');
		const store = new Store(storeConfig(schema, bouncer.settings));
		try {
			await store.ready();
			const sent: string[] = [];
			const query = store.pool.query.bind(store.pool);
			store.pool.query = ((text: string, ...rest: unknown[]) => {
				sent.push(text);
				return (query as (...args: unknown[]) => unknown)(text, ...rest);
			}) as typeof store.pool.query;
			await store.query(`SELECT 1 AS one`);
			await store.query(`SELECT 2 AS two`);
			expect(sent).toEqual(['SELECT 1 AS one', 'SELECT 2 AS two']);
		} finally {
			await store.close();
		}
	});
});
