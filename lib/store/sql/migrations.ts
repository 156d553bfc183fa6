import { quoteIdent } from '../identifiers';
import type { SqlQuery } from '../store';

/**
 * The migration runner's own statements. They run before a Store exists (and in the DBA's
 * script), so they take the schema's name rather than a Store; the name is quoted here.
 */

/** Takes the migration lock of `schema` for the transaction: one lock key per schema, so stores in different schemas of one database migrate independently. */
export const migrationLockSql = (input: { schema: string }): SqlQuery => ({
	text: `SELECT pg_advisory_xact_lock(hashtext('n8n_reliability.migrate:' || $1::text))`,
	values: [input.schema],
});

/** The schema and its table of applied migrations, where they do not exist yet. */
export const bootstrapSql = (schema: string): SqlQuery => ({
	text: `
CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)};
CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.migrations (
	id integer PRIMARY KEY,
	name text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
);`,
	values: [],
});

/** Whether `schema` has its migrations table, read from the catalogs (see appliedMigrationId). */
export const migrationsTableExistsSql = (input: { schema: string }): SqlQuery => ({
	text: `SELECT EXISTS (
			SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relname = 'migrations' AND c.relkind IN ('r', 'p')
		) AS exists`,
	values: [input.schema],
});

/** The highest migration applied to the schema. */
export const appliedMigrationSql = (schema: string): SqlQuery => ({
	text: `SELECT max(id) AS id FROM ${quoteIdent(schema)}.migrations`,
	values: [],
});

/** Records migration `id` (named `name`) as applied. */
export const recordMigrationSql = (
	schema: string,
	input: { id: number; name: string },
): SqlQuery => ({
	text: `INSERT INTO ${quoteIdent(schema)}.migrations (id, name) VALUES ($1, $2)`,
	values: [input.id, input.name],
});

/** The same record as a literal statement, for the DBA's script (the name is the file's, [a-z0-9_]). */
export const recordMigrationScriptSql = (schema: string, id: number, name: string): string =>
	`INSERT INTO ${quoteIdent(schema)}.migrations (id, name) VALUES (${id}, '${name}') ON CONFLICT (id) DO NOTHING;`;
