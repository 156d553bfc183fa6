import type { PoolClient, QueryResultRow } from 'pg';
import { isReliabilityError } from '../errors';
import { type Store, toStoreError } from '../store';

/**
 * Runs `work` in one transaction on a pooled connection of the store: COMMIT when it returns,
 * ROLLBACK when it throws. A connection that failed mid-transaction is destroyed, not returned
 * to the pool. Connection failures come out as StoreUnavailableError, like every store call.
 */
export async function inTransaction<T>(
	store: Store,
	work: (client: PoolClient) => Promise<T>,
): Promise<T> {
	await store.ready();
	let client: PoolClient;
	try {
		client = await store.pool.connect();
	} catch (error) {
		throw toStoreError(error, store.config);
	}
	let broken = false;
	try {
		await client.query('BEGIN');
		const result = await work(client);
		await client.query('COMMIT');
		return result;
	} catch (error) {
		await client.query('ROLLBACK').catch(() => {
			broken = true;
		});
		throw isReliabilityError(error) ? error : toStoreError(error, store.config);
	} finally {
		client.release(broken);
	}
}

/**
 * The store as seen from inside a transaction: the same schema and tables, every query on the
 * transaction's connection. Lets engine functions written against a Store (parking a dead
 * letter) take part in the outbox's transaction, so the message and its dead letter change
 * together.
 */
export function storeOnClient(store: Store, client: PoolClient): Store {
	const view = Object.create(store) as Store;
	view.query = async <R extends QueryResultRow>(text: string, values: unknown[] = []) =>
		(await client.query<R>(text, values)).rows;
	return view;
}
