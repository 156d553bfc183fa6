import type { QueryResultRow } from 'pg';
import type { SqlQuery, Store, Transaction } from '../store';

/**
 * The store as seen from inside one of its transactions: the same schema and tables, every
 * statement on the transaction's connection. Lets engine functions written against a Store
 * (parking a dead letter) take part in the outbox's transaction, so the message and its dead
 * letter change together.
 */
export function storeInTransaction(store: Store, tx: Transaction): Store {
	const view = Object.create(store) as Store;
	view.query = async <R extends QueryResultRow>(query: SqlQuery | string, values: unknown[] = []) =>
		await tx.query<R>(query, values);
	view.execute = async <R extends QueryResultRow>(
		query: SqlQuery | string,
		values: unknown[] = [],
	) => await tx.execute<R>(query, values);
	return view;
}
