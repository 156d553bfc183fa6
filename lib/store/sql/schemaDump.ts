import type { SqlQuery } from '../store';

/**
 * The catalog reads behind the schema dump (lib/store/schema.sql), each of `schema` and in a
 * fixed order (names sort bytewise: the `name` type's collation is C), so two fresh migrations
 * read the same on any server.
 */

/**
 * Names what is outside pg_catalog in the reads that follow, for the rest of the transaction:
 * the dump's tables and functions are then always schema-qualified (and the schema replaced by
 * its placeholder), and pg_trgm's operator classes are named without the schema it happens to
 * be installed in.
 */
export const dumpSearchPathSql = (): SqlQuery => ({
	text: `
SELECT set_config('search_path', concat_ws(', ', 'pg_catalog',
	(SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	 WHERE e.extname = 'pg_trgm')), true)`,
	values: [],
});

/** The tables, by name, with their storage options (autovacuum settings). */
export const dumpTablesSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT c.relname AS name, coalesce(c.reloptions, '{}') AS options
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
ORDER BY c.relname`,
	values: [input.schema],
});

/**
 * The tables' columns in their order: type, nullability, identity or generated expression, and
 * default. Dropped columns are gone from the dump as they are from the table.
 */
export const dumpColumnsSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull AS not_null, a.attidentity AS identity, a.attgenerated AS generated,
       pg_get_expr(d.adbin, d.adrelid) AS expression
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum`,
	values: [input.schema],
});

/**
 * The tables' constraints, the primary key first. NOT NULL is left to the columns: Postgres 18
 * lists it here as well, older servers do not.
 */
export const dumpConstraintsSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND k.contype <> 'n'
ORDER BY c.relname, k.contype <> 'p', k.conname`,
	values: [input.schema],
});

/** The indexes that no constraint made (those are in the constraints already). */
export const dumpIndexesSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT t.relname AS table, i.relname AS name, pg_get_indexdef(i.oid) AS definition
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = $1 AND NOT EXISTS (
	SELECT 1 FROM pg_constraint k
	WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid AND k.contype IN ('p', 'u', 'x'))
ORDER BY t.relname, i.relname`,
	values: [input.schema],
});

/** The triggers the migrations created (not the ones Postgres keeps for foreign keys). */
export const dumpTriggersSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT c.relname AS table, t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND NOT t.tgisinternal
ORDER BY c.relname, t.tgname`,
	values: [input.schema],
});

/** The functions and procedures, by name and arguments. */
export const dumpFunctionsSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT p.proname AS name, pg_get_functiondef(p.oid) AS definition
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.prokind IN ('f', 'p')
ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
	values: [input.schema],
});

/** The views, plain and materialized, by name. */
export const dumpViewsSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT c.relname AS name, c.relkind = 'm' AS materialized, pg_get_viewdef(c.oid) AS definition
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('v', 'm')
ORDER BY c.relname`,
	values: [input.schema],
});
