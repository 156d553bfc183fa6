/** What every benchmark script shares: a median, and Postgres with a freshly migrated store schema. */
import { Client } from 'pg';
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
