/**
 * `npm run schema:dump`: migrates a fresh schema on the Postgres that PG* / DATABASE_URL name (else
 * an embedded one), writes what the migrations made of it to lib/store/schema.sql, and drops the
 * schema again. Run it with each new migration and commit the file: a test expects it to match.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { REPO_ROOT } from '../dev/harness/paths';
import { ensurePostgres } from '../dev/harness/postgres';
import { quoteIdent, Store } from '../lib/store';
import { renderSchema, SCHEMA_DUMP_FILE } from '../lib/store/schemaDump';

async function main(): Promise<void> {
	const postgres = await ensurePostgres('schema-dump');
	const schema = `schema_dump_${randomBytes(4).toString('hex')}`;
	const store = new Store({ ...postgres.settings, ssl: 'disable', schema, maxConnections: 2 });
	try {
		await store.ready();
		writeFileSync(SCHEMA_DUMP_FILE, await renderSchema(store.pool, schema));
		process.stdout.write(`Wrote ${relative(REPO_ROOT, SCHEMA_DUMP_FILE)}\n`);
	} finally {
		await store.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
		await store.close();
		await postgres.stop();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
