import { ConfigurationError, StoreUnavailableError } from '../../lib/errors';
import {
	closeAllStores,
	diagnoseStore,
	getStore,
	latestMigrationId,
	migrate,
	Store,
	toStoreConfig,
} from '../../lib/store';
import { pgSettingsFromEnv } from '../../dev/harness/postgres';
import {
	adminClient,
	adminQuery,
	credentialData,
	dropSchema,
	storeConfig,
	uniqueSchema,
} from '../helpers/store';

const schemas: string[] = [];
const newSchema = (label: string): string => {
	const schema = uniqueSchema(label);
	schemas.push(schema);
	return schema;
};

afterAll(async () => {
	await closeAllStores();
	for (const schema of schemas) await dropSchema(schema);
});

describe('first use', () => {
	it('ten first uses at once migrate the schema exactly once', async () => {
		const schema = newSchema('migrate10');
		// Ten separate pools, as ten n8n workers starting at the same moment would have.
		const stores = Array.from({ length: 10 }, () => new Store(storeConfig(schema)));
		let runs: number[][];
		try {
			runs = await Promise.all(stores.map((store) => migrate(store.pool, schema)));
		} finally {
			await Promise.all(stores.map((store) => store.close()));
		}
		const allIds = Array.from({ length: latestMigrationId() }, (_, i) => i + 1);
		expect(runs.filter((ids) => ids.length > 0)).toEqual([allIds]);
		const applied = await adminQuery<{ id: number; name: string }>(
			`SELECT id, name FROM "${schema}".migrations ORDER BY id`,
		);
		expect(applied.map((row) => row.id)).toEqual(allIds);
		const tables = await adminQuery<{ table_name: string }>(
			`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
			[schema],
		);
		expect(tables.map((t) => t.table_name)).toEqual(
			expect.arrayContaining(['migrations', 'processed_events', 'entity_versions']),
		);
	});

	it('a worker that waited for the lock while another migrated sees its work, round after round', async () => {
		// Each worker looks for the schema before it takes the lock, on the same connection: a
		// catalog cache that remembered "no such table" made the waiting ones migrate again.
		for (let round = 0; round < 10; round++) {
			const schema = newSchema(`migrate_race${round}`);
			const stores = Array.from(
				{ length: 8 },
				() => new Store({ ...storeConfig(schema), maxConnections: 1 }),
			);
			let runs: Array<PromiseSettledResult<number[]>>;
			try {
				runs = await Promise.allSettled(stores.map((store) => migrate(store.pool, schema)));
			} finally {
				await Promise.all(stores.map((store) => store.close()));
			}
			expect(runs.filter((run) => run.status === 'rejected')).toEqual([]);
			const applied = runs.map((run) => (run.status === 'fulfilled' ? run.value : []));
			expect(applied.filter((ids) => ids.length > 0)).toHaveLength(1);
		}
	});

	it('a later start finds the schema up to date and applies nothing', async () => {
		const schema = newSchema('migrate_again');
		const first = new Store(storeConfig(schema));
		await first.ready();
		await first.close();
		const before = await adminQuery<{ applied_at: Date }>(
			`SELECT applied_at FROM "${schema}".migrations`,
		);
		const second = new Store(storeConfig(schema));
		await second.ready();
		await second.close();
		const after = await adminQuery<{ applied_at: Date }>(
			`SELECT applied_at FROM "${schema}".migrations`,
		);
		expect(after).toEqual(before);
	});

	it('the tables that Housekeeping purges every day are vacuumed once 2% of them is dead', async () => {
		const schema = newSchema('autovacuum');
		const store = new Store(storeConfig(schema));
		await store.ready();
		await store.close();
		const tables = await adminQuery<{ relname: string; reloptions: string[] }>(
			`SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			 WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reloptions IS NOT NULL ORDER BY c.relname`,
			[schema],
		);
		expect(tables.map((t) => t.relname)).toEqual([
			'entity_versions',
			'idempotency_keys',
			'outbox_messages',
			'processed_events',
		]);
		for (const table of tables)
			expect(table.reloptions).toEqual(
				expect.arrayContaining([
					'autovacuum_vacuum_scale_factor=0.02',
					'autovacuum_analyze_scale_factor=0.02',
				]),
			);
	});

	it('a bad schema name is a clear error and creates nothing', async () => {
		// Only schemas these names could have made: other test files create and drop their own.
		const suspects = `SELECT count(*)::int AS n FROM pg_namespace WHERE lower(nspname) LIKE 'bad%'`;
		const before = await adminQuery<{ n: number }>(suspects);
		expect(() => toStoreConfig(credentialData('bad-name; DROP SCHEMA public'))).toThrow(
			ConfigurationError,
		);
		const result = await diagnoseStore(credentialData('Bad"Name'));
		expect(result.ok).toBe(false);
		expect(result.message).toMatch(/is not a valid identifier.*lowercase letters/);
		const after = await adminQuery<{ n: number }>(suspects);
		expect(after[0].n).toBe(before[0].n);
	});

	it('fails before any statement when Postgres is unreachable', async () => {
		const store = new Store({ ...storeConfig(newSchema('unreachable')), port: 1 });
		try {
			await expect(store.ready()).rejects.toThrow(StoreUnavailableError);
			await expect(store.ready()).rejects.toThrow(
				/unreachable at 127\.0\.0\.1:1|unreachable at localhost:1/,
			);
		} finally {
			await store.close();
		}
	});
});

describe('pools', () => {
	it('one pool per credential, reused across executions', async () => {
		const schema = newSchema('pools');
		const a = getStore(storeConfig(schema));
		const b = getStore(storeConfig(schema));
		const other = getStore({ ...storeConfig(schema), maxConnections: 3 });
		expect(b).toBe(a);
		expect(other).not.toBe(a);
		await a.ready();
		expect(a.pool.options.max).toBe(10);
		expect(other.pool.options.max).toBe(3);
	});
});

describe('credential test', () => {
	it('reports the server and the migration level of an existing schema', async () => {
		const schema = newSchema('diag_found');
		const store = new Store(storeConfig(schema));
		await store.ready();
		await store.close();
		const result = await diagnoseStore(credentialData(schema));
		expect(result).toEqual({
			ok: true,
			message: expect.stringMatching(
				new RegExp(
					`^PostgreSQL \\d+\\.\\d+.*, schema ${schema} at migration ${latestMigrationId()} of ${latestMigrationId()}$`,
				),
			),
		});
	});

	it('says an absent schema will be created on first use, and creates nothing', async () => {
		const schema = newSchema('diag_absent');
		const result = await diagnoseStore(credentialData(schema));
		expect(result).toEqual({
			ok: true,
			message: expect.stringMatching(
				new RegExp(`^PostgreSQL \\d+.*, schema ${schema} absent: it will be created on first use$`),
			),
		});
		expect(
			await adminQuery(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]),
		).toHaveLength(0);
	});

	it('says host:port is unreachable', async () => {
		const result = await diagnoseStore({
			...credentialData('n8n_reliability'),
			host: '127.0.0.1',
			port: 1,
		});
		expect(result).toEqual({
			ok: false,
			message: expect.stringMatching(/^127\.0\.0\.1:1 unreachable: connection refused/),
		});
	});

	it('names the missing CREATE privilege and the GRANT to run', async () => {
		const role = `t_noprivs_${process.pid}`;
		await adminQuery(`DROP ROLE IF EXISTS ${role}`);
		await adminQuery(`CREATE ROLE ${role} LOGIN PASSWORD 'x'`);
		try {
			const settings = pgSettingsFromEnv();
			const result = await diagnoseStore({
				...credentialData(newSchema('diag_noprivs')),
				user: role,
				password: 'x',
			});
			expect(result.ok).toBe(false);
			expect(result.message).toContain(
				`missing CREATE privilege on database "${settings.database}"`,
			);
			expect(result.message).toContain(
				`GRANT CREATE ON DATABASE "${settings.database}" TO "${role}";`,
			);
		} finally {
			await adminQuery(`DROP ROLE IF EXISTS ${role}`);
		}
	});

	it('says the password is wrong, on a server that checks passwords', async () => {
		const server = JSON.parse(process.env.RELIABILITY_TEST_PASSWORD_PG!) as ReturnType<
			typeof pgSettingsFromEnv
		>;
		const good = await diagnoseStore({
			...server,
			ssl: 'disable',
			schema: 'n8n_reliability',
			maxConnections: 2,
		});
		expect(good.ok).toBe(true);
		const wrong = await diagnoseStore({
			...server,
			password: 'not-the-password',
			ssl: 'disable',
			schema: 'n8n_reliability',
			maxConnections: 2,
		});
		expect(wrong).toEqual({
			ok: false,
			message: `Wrong password for user "${server.user}" at ${server.host}:${server.port} (password authentication failed). Check Password in the credential.`,
		});
	});

	it('says a database does not exist', async () => {
		const result = await diagnoseStore({
			...credentialData('n8n_reliability'),
			database: 'no_such_database_here',
		});
		expect(result).toEqual({
			ok: false,
			message: expect.stringMatching(/^Database "no_such_database_here" does not exist/),
		});
	});

	it('does not keep a connection open after the test', async () => {
		// A database of its own, which no other file's store or n8n uses while files run side by
		// side: every connection to it is the test's. Dropping it without FORCE fails while one
		// is left open.
		const database = `reliability_diag_${process.pid}_${Date.now()}`;
		await adminQuery(`CREATE DATABASE ${database}`);
		const count = async (): Promise<number> => {
			const client = await adminClient();
			const { rows } = await client.query(
				`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`,
				[database],
			);
			await client.end();
			return rows[0].n as number;
		};
		try {
			const result = await diagnoseStore({ ...credentialData('n8n_reliability'), database });
			expect(result).toEqual({ ok: true, message: expect.any(String) });
			expect(await count()).toBe(0);
		} finally {
			await adminQuery(`DROP DATABASE IF EXISTS ${database}`);
		}
	});
});
