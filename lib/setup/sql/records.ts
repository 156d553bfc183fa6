import type { SqlQuery, Store } from '../../store';

/** What Setup last wrote into an n8n instance, one row per bundled workflow. */

export const setupRecordsSql = (store: Store, input: { instance: string }): SqlQuery => ({
	text: `
SELECT bundled_id, workflow_id, nodes, connections, published
FROM ${store.table('setup_workflows')} WHERE instance = $1`,
	values: [input.instance],
});

/** Written after each workflow Setup creates or updates, so a Setup cut off midway keeps what it did. */
export const saveSetupRecordSql = (
	store: Store,
	input: {
		instance: string;
		bundledId: string;
		workflowId: string;
		nodes: Record<string, string>;
		connections: string;
		published: boolean;
	},
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('setup_workflows')} (instance, bundled_id, workflow_id, nodes, connections, published)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (instance, bundled_id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id,
	nodes = EXCLUDED.nodes, connections = EXCLUDED.connections, published = EXCLUDED.published,
	written_at = now()`,
	values: [
		input.instance,
		input.bundledId,
		input.workflowId,
		JSON.stringify(input.nodes),
		input.connections,
		input.published,
	],
});
