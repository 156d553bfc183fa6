import { join } from 'node:path';
import type { Pool } from 'pg';
import { latestMigrationId } from './migrations';
import type { SqlQuery } from './store';
import {
	dumpColumnsSql,
	dumpConstraintsSql,
	dumpFunctionsSql,
	dumpIndexesSql,
	dumpSearchPathSql,
	dumpTablesSql,
	dumpTriggersSql,
	dumpViewsSql,
} from './sql';

/**
 * The store's schema as its migrations leave it, each table whole (columns, constraints,
 * indexes, triggers) instead of across the numbered files: `npm run schema:dump` writes it to
 * lib/store/schema.sql, and a test renders a fresh migration again and expects that file. Only
 * what the catalogs say of the schema goes in (no server version, no object ids), with the
 * schema's name replaced by `:SCHEMA`, so the text is the same on every server.
 */
export const SCHEMA_DUMP_FILE = join(__dirname, 'schema.sql');

type Named = { table: string; name: string; definition: string };
type Column = {
	table: string;
	name: string;
	type: string;
	not_null: boolean;
	identity: '' | 'a' | 'd';
	generated: '' | 's' | 'v';
	expression: string | null;
};

type Catalog = {
	tables: Array<{ name: string; options: string[] }>;
	columns: Column[];
	constraints: Named[];
	indexes: Named[];
	triggers: Named[];
	functions: Array<{ name: string; definition: string }>;
	views: Array<{ name: string; materialized: boolean; definition: string }>;
};

/** Reads schema `schema` (migrated) through `pool` and renders it as the dump's text. */
export async function renderSchema(pool: Pool, schema: string): Promise<string> {
	const { tables, columns, constraints, indexes, triggers, functions, views } = await readCatalog(
		pool,
		schema,
	);
	const of = <R extends { table: string }>(rows: R[], table: string): R[] =>
		rows.filter((row) => row.table === table);
	const parts = [
		[
			`-- The store's schema as migrations 1 to ${latestMigrationId()} leave it, each table whole.`,
			'-- Written by `npm run schema:dump`; do not edit: a test migrates a fresh schema and expects',
			'-- this text. :SCHEMA stands for the schema name. On a server without pg_trgm, Trace gets',
			'-- prefix indexes (text_pattern_ops) in place of the trigram ones below.',
		].join('\n'),
		...functions.map((f) => `${f.definition.trim()};`),
		...tables.map((table) =>
			[
				tableStatement(table.name, of(columns, table.name), of(constraints, table.name)) +
					(table.options.length ? ` WITH (${table.options.join(', ')});` : ';'),
				...of(indexes, table.name).map((index) => `${index.definition};`),
				...of(triggers, table.name).map((trigger) => `${trigger.definition};`),
			].join('\n'),
		),
		...views.map(
			(view) =>
				`CREATE ${view.materialized ? 'MATERIALIZED VIEW' : 'VIEW'} :SCHEMA.${view.name} AS\n${view.definition.trim()}`,
		),
	];
	return withPlaceholder(`${parts.join('\n\n')}\n`, schema);
}

/** Every catalog read in one read-only transaction, under the dump's search path. */
async function readCatalog(pool: Pool, schema: string): Promise<Catalog> {
	const client = await pool.connect();
	try {
		await client.query('BEGIN READ ONLY');
		await client.query(dumpSearchPathSql());
		const read = async <R>(query: SqlQuery): Promise<R[]> =>
			(await client.query(query)).rows as R[];
		const catalog: Catalog = {
			tables: await read(dumpTablesSql({ schema })),
			columns: await read(dumpColumnsSql({ schema })),
			constraints: await read(dumpConstraintsSql({ schema })),
			indexes: await read(dumpIndexesSql({ schema })),
			triggers: await read(dumpTriggersSql({ schema })),
			functions: await read(dumpFunctionsSql({ schema })),
			views: await read(dumpViewsSql({ schema })),
		};
		await client.query('COMMIT');
		return catalog;
	} catch (error) {
		await client.query('ROLLBACK').catch(() => undefined);
		throw error;
	} finally {
		client.release();
	}
}

function tableStatement(name: string, columns: Column[], constraints: Named[]): string {
	const lines = [
		...columns.map((column) => {
			const words = [column.name, column.type];
			if (column.identity)
				words.push(`GENERATED ${column.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`);
			if (column.generated)
				words.push(
					`GENERATED ALWAYS AS (${column.expression}) ${column.generated === 's' ? 'STORED' : 'VIRTUAL'}`,
				);
			if (column.not_null) words.push('NOT NULL');
			if (column.expression !== null && !column.generated)
				words.push(`DEFAULT ${column.expression}`);
			return words.join(' ');
		}),
		...constraints.map((constraint) => `CONSTRAINT ${constraint.name} ${constraint.definition}`),
	];
	return `CREATE TABLE :SCHEMA.${name} (\n${lines.map((line) => `\t${line}`).join(',\n')}\n)`;
}

/** The schema's name, quoted or not, as `:SCHEMA` (it is a validated plain identifier). */
const withPlaceholder = (text: string, schema: string): string =>
	text
		.split(`"${schema}"`)
		.join(':SCHEMA')
		.replace(new RegExp(`(?<![A-Za-z0-9_$])${schema}(?![A-Za-z0-9_$])`, 'g'), ':SCHEMA');
