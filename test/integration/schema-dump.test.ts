import { existsSync, readFileSync } from 'node:fs';
import { renderSchema, SCHEMA_DUMP_FILE } from '../../lib/store/schemaDump';
import { testStore } from '../helpers/store';

const { store, schema, cleanup } = testStore('schema_dump');
afterAll(cleanup);

/** Undefined when the texts match; else what to do, and the first line that differs. */
function staleness(rendered: string, committed: string): string | undefined {
	if (rendered === committed) return undefined;
	const fresh = rendered.split('\n');
	const kept = committed.split('\n');
	const line = fresh.findIndex((text, index) => text !== kept[index]);
	const at = line === -1 ? kept.length : line;
	return `schema.sql is stale: run npm run schema:dump (line ${at + 1} is ${JSON.stringify(kept[at] ?? null)}, a fresh migration makes it ${JSON.stringify(fresh[at] ?? null)})`;
}

describe('the schema dump', () => {
	it('lib/store/schema.sql is what the migrations make of a fresh schema', async () => {
		await store.ready();
		const rendered = await renderSchema(store.pool, schema);
		const committed = existsSync(SCHEMA_DUMP_FILE) ? readFileSync(SCHEMA_DUMP_FILE, 'utf8') : '';
		expect(staleness(rendered, committed)).toBeUndefined();
	});
});
