import type { Client, Pool, PoolClient } from 'pg';
import { quoteIdent } from './identifiers';
import { migrationFiles } from './migrationFiles';
import {
	appliedMigrationSql,
	bootstrapSql,
	migrationLockSql,
	migrationsTableExistsSql,
	recordMigrationScriptSql,
	recordMigrationSql,
} from './sql/migrations';

/**
 * Numbered SQL migrations (`000001_name.sql`), the pending ones applied in one transaction under
 * a transaction-level advisory lock, so ten workers starting at once (directly or through a
 * pooler in transaction mode) migrate exactly once and the other nine wait, then find nothing
 * left to do. `:SCHEMA` in a file stands for the quoted schema name.
 */
export interface Migration {
	id: number;
	name: string;
	sql: string;
}

const FILE_NAME = /^(\d{6})_([a-z0-9_]+)\.sql$/;

let cached: Migration[] | undefined;

export function loadMigrations(): Migration[] {
	if (!cached) {
		cached = Object.entries(migrationFiles())
			.map(([file, sql]) => ({ sql, match: FILE_NAME.exec(file) }))
			.filter((entry): entry is { sql: string; match: RegExpExecArray } => entry.match !== null)
			.map(({ sql, match }) => ({ id: Number(match[1]), name: match[2], sql }))
			.sort((a, b) => a.id - b.id);
		cached.forEach((migration, index) => {
			if (migration.id !== index + 1)
				throw new Error(`Migration ${migration.id} is out of sequence: expected ${index + 1}`);
		});
	}
	return cached;
}

export const latestMigrationId = (): number => loadMigrations().length;

const renderMigration = (migration: Migration, schema: string): string =>
	migration.sql.replace(/:SCHEMA\b/g, quoteIdent(schema));

/**
 * The migration level of a schema: 0 when the schema or its migrations table does not exist.
 *
 * The table is looked for in the catalogs by a query, not by `to_regclass`: a name lookup goes
 * through the connection's catalog cache, which keeps "no such table" from an earlier look and
 * is refreshed only when the connection locks a relation. A worker that waited on the advisory
 * lock while another created the schema would still be told it is missing, and migrate it again
 * ("relation processed_events already exists"). Reading pg_class locks it, which refreshes the
 * cache, and reads with the statement's own snapshot, which sees the other worker's commit.
 */
export async function appliedMigrationId(
	db: Pool | PoolClient | Client,
	schema: string,
): Promise<number> {
	const { rows } = await db.query<{ exists: boolean }>(migrationsTableExistsSql({ schema }));
	if (!rows[0].exists) return 0;
	const result = await db.query<{ id: number | null }>(appliedMigrationSql(schema));
	return result.rows[0].id ?? 0;
}

/**
 * Applies every pending migration; returns the ids it applied (empty when another worker did).
 *
 * The lock is transaction-level and everything it guards runs inside that one transaction: the
 * check of the applied list, the schema's creation and every pending file. Behind a pooler in
 * transaction mode (PgBouncer, Supabase's and Neon's poolers) a session lock would stay held on
 * whichever server connection took it, and the statements around it could run on others; a
 * transaction's statements always share one server connection, and the lock ends with it.
 */
export async function migrate(pool: Pool, schema: string): Promise<number[]> {
	const migrations = loadMigrations();
	if ((await appliedMigrationId(pool, schema)) >= migrations.length) return [];

	const client = await pool.connect();
	let broken: Error | undefined;
	const onError = (error: Error) => {
		broken = error;
	};
	client.on('error', onError);
	try {
		await client.query('BEGIN');
		try {
			await client.query(migrationLockSql({ schema }));
			// Read again under the lock: the worker that held it before may have migrated everything.
			const current = await appliedMigrationId(client, schema);
			const pending = migrations.filter((m) => m.id > current);
			if (pending.length > 0) await client.query(bootstrapSql(schema));
			for (const migration of pending) {
				await client.query(renderMigration(migration, schema));
				await client.query(recordMigrationSql(schema, { id: migration.id, name: migration.name }));
			}
			await client.query('COMMIT');
			return pending.map((m) => m.id);
		} catch (error) {
			if (!broken) await client.query('ROLLBACK').catch(() => undefined);
			throw error;
		}
	} finally {
		client.off('error', onError);
		client.release(broken);
	}
}

/** The whole migration as one script, for DBAs who apply schema changes by hand. */
export function migrationScript(schema: string): string {
	const parts = [
		`-- n8n-nodes-reliability store, schema ${quoteIdent(schema)}: migrations 1 to ${latestMigrationId()}.`,
		'-- Run as a role with CREATE on the database; the nodes then find the schema up to date.',
		bootstrapSql(schema).text.trim(),
	];
	for (const migration of loadMigrations()) {
		parts.push(
			`-- ${String(migration.id).padStart(6, '0')}_${migration.name}`,
			'BEGIN;',
			renderMigration(migration, schema).trim(),
			recordMigrationScriptSql(schema, migration.id, migration.name),
			'COMMIT;',
		);
	}
	return parts.join('\n\n') + '\n';
}
