import { type SetupRecord, storeSetupRecords } from '../../lib/setup';
import { fingerprints } from '../../lib/setup/merge';
import { bundledWorkflowFiles, parseBundled } from '../../lib/setup';
import { testStore } from '../helpers/store';

/**
 * What Setup wrote into an n8n instance, kept in the store: every bundled workflow's record as
 * Setup writes it round-trips, per instance, and a second save replaces the first.
 */
const { store, cleanup } = testStore('setup_records');
afterAll(cleanup);

describe("Setup's records in the store", () => {
	const bundled = parseBundled(bundledWorkflowFiles());
	const recordOf = (index: number, published: boolean): SetupRecord => ({
		bundledId: bundled[index].id,
		workflowId: `wf-${index}`,
		...fingerprints(bundled[index]),
		published,
	});

	it('keeps the record of every bundled workflow, per n8n instance', async () => {
		const prod = storeSetupRecords(store, 'https://n8n.example/api/v1');
		const staging = storeSetupRecords(store, 'https://staging.example/api/v1');
		for (const index of bundled.keys()) await prod.save(recordOf(index, false));
		await staging.save(recordOf(0, true));

		const read = await prod.read();
		expect([...read.values()]).toEqual(
			expect.arrayContaining(bundled.map((_, index) => recordOf(index, false))),
		);
		expect(read.size).toBe(bundled.length);
		expect([...(await staging.read()).values()]).toEqual([recordOf(0, true)]);
	});

	it('a later save of a workflow replaces its record', async () => {
		const records = storeSetupRecords(store, 'https://replace.example/api/v1');
		await records.save(recordOf(1, false));
		const again = { ...recordOf(1, true), workflowId: 'wf-moved', connections: 'other' };
		await records.save(again);
		expect([...(await records.read()).values()]).toEqual([again]);
	});
});
