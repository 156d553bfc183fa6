import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Store, type StoreConfig } from '../../lib/store';
import { clientConfig, type PgSettings, pgSettingsFromEnv } from '../../dev/harness/postgres';

/** A schema name of its own for each test file; dropped afterwards, since the server is reused. */
export const uniqueSchema = (label: string): string =>
	`t_${label.replace(/[^a-z0-9_]/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`;

export function storeConfig(
	schema: string,
	settings: PgSettings = pgSettingsFromEnv(),
): StoreConfig {
	return { ...settings, ssl: 'disable', schema, maxConnections: 10 };
}

/** The credential fields n8n would hand the nodes for this server and schema. */
export const credentialData = (
	schema: string,
	settings: PgSettings = pgSettingsFromEnv(),
): Record<string, unknown> => ({
	...settings,
	ssl: 'disable',
	schema,
	maxConnections: 10,
});

/**
 * A connection of its own as the test superuser, for a test that holds a transaction or a lock
 * open beside the store's pool, or reads the server's own views; the caller ends it.
 */
export async function adminClient(): Promise<Client> {
	const client = new Client(clientConfig(pgSettingsFromEnv()));
	await client.connect();
	return client;
}

export async function dropSchema(schema: string): Promise<void> {
	const client = await adminClient();
	try {
		await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
	} finally {
		await client.end();
	}
}

/** Runs SQL as the test superuser (seeding, inspecting the store's rows). */
export async function adminQuery<R = Record<string, unknown>>(
	sql: string,
	values: unknown[] = [],
): Promise<R[]> {
	const client = await adminClient();
	try {
		return (await client.query(sql, values)).rows as R[];
	} finally {
		await client.end();
	}
}

/** A fresh store in its own schema, and its cleanup. */
export function testStore(label: string): {
	store: Store;
	schema: string;
	cleanup: () => Promise<void>;
} {
	const schema = uniqueSchema(label);
	const store = new Store(storeConfig(schema));
	return {
		store,
		schema,
		cleanup: async () => {
			await store.close();
			await dropSchema(schema);
		},
	};
}
