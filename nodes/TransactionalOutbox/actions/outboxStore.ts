import type { IExecuteFunctions } from 'n8n-workflow';
import { getStore, outboxStoreConfig, type Store } from '../../../lib';

const POSTGRES_CREDENTIAL = 'postgres';

/**
 * The store that holds the outbox table: the Reliability Store itself, or the database of a
 * Postgres credential (migrated on first use, in the schema the node names).
 */
export async function outboxStoreFor(context: IExecuteFunctions, store: Store): Promise<Store> {
	if (context.getNodeParameter('outboxDatabase', 0, 'store') !== 'postgres') return store;
	const credential = await context.getCredentials(POSTGRES_CREDENTIAL);
	const outbox = getStore(
		outboxStoreConfig(
			credential as Record<string, unknown>,
			String(context.getNodeParameter('outboxSchema', 0, '') ?? ''),
		),
	);
	await outbox.ready();
	return outbox;
}
