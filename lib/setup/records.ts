import type { Store } from '../store';
import type { SetupRecord } from './merge';
import { saveSetupRecordSql, setupRecordsSql } from './sql';

/** Where Setup keeps what it wrote into one n8n instance, so that the next Setup can merge. */
export interface SetupRecords {
	read(): Promise<Map<string, SetupRecord>>;
	save(record: SetupRecord): Promise<void>;
}

type Row = {
	bundled_id: string;
	workflow_id: string;
	nodes: Record<string, string>;
	connections: string;
	published: boolean;
};

/** Setup's records in the store, for the n8n instance at `instance` (the n8n API's base URL). */
export function storeSetupRecords(store: Store, instance: string): SetupRecords {
	return {
		async read() {
			const rows = await store.query<Row>(setupRecordsSql(store, { instance }));
			return new Map(
				rows.map((row) => [
					row.bundled_id,
					{
						bundledId: row.bundled_id,
						workflowId: row.workflow_id,
						nodes: row.nodes,
						connections: row.connections,
						published: row.published,
					},
				]),
			);
		},
		async save(record) {
			await store.query(
				saveSetupRecordSql(store, {
					instance,
					bundledId: record.bundledId,
					workflowId: record.workflowId,
					nodes: record.nodes,
					connections: record.connections,
					published: record.published,
				}),
			);
		},
	};
}
