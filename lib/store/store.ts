import { Pool } from 'pg';
import type { PoolClient, QueryResultRow } from 'pg';
import { type StoreConfig, toPoolConfig } from './config';
import { toStoreError } from './failures';
import { quoteIdent } from './identifiers';
import { migrate } from './migrations';
import { SqlState, sqlStateOf } from './sqlstate';

/**
 * One statement as the engine sends it: its text and the values of its placeholders, in order
 * (`$1` is `values[0]`). Every SQL builder returns one, so a statement's values are built beside
 * the placeholders they fill. The shape of pg's QueryConfig.
 */
export type SqlQuery = { text: string; values: unknown[] };

/**
 * The store of one credential: a pg.Pool reused across executions (never one per execution),
 * the schema it lives in, and a once-per-process migration check. Stores are cached by a hash
 * of the credential's fields and closed after they sit idle (registry.ts).
 */
export class Store {
	pool: Pool;
	readonly schema: string;
	private migrated: Promise<void> | undefined;
	/** Set once the migration check succeeded: from then on `ready()` sends nothing and waits on nothing. */
	private isReady = false;
	lastUsed = Date.now();
	/** Runs that hold the store (a write in flight): the idle sweeper never closes a held store. */
	private holds = 0;

	constructor(readonly config: StoreConfig) {
		this.schema = config.schema;
		this.pool = createPool(config, false);
	}

	/** `"schema".table`, for SQL builders. */
	table(name: string): string {
		return `${quoteIdent(this.schema)}.${name}`;
	}

	/** Makes sure the schema exists and is migrated; runs once per process and pool. */
	async ready(): Promise<void> {
		this.lastUsed = Date.now();
		if (this.isReady) return;
		this.migrated ??= this.migrateOnce().then(
			() => {
				this.isReady = true;
			},
			(error: unknown) => {
				this.migrated = undefined;
				throw toStoreError(error, this.config);
			},
		);
		await this.migrated;
	}

	private async migrateOnce(): Promise<void> {
		try {
			await migrate(this.pool, this.schema);
		} catch (error) {
			// SSL "allow": the server refused the plain connection, so speak TLS from now on.
			if (this.config.ssl !== 'allow' || sqlStateOf(error) !== SqlState.invalidAuthorization)
				throw error;
			const plain = this.pool;
			this.pool = createPool(this.config, true);
			void plain.end().catch(() => undefined);
			await migrate(this.pool, this.schema);
		}
	}

	/**
	 * Runs one statement; its rows. The engine's statements come from SQL builders as a SqlQuery;
	 * text with its values (or none) is accepted too, for inline SQL such as a test's own checks.
	 */
	async query<R extends QueryResultRow>(
		query: SqlQuery | string,
		values: unknown[] = [],
	): Promise<R[]> {
		return (await this.execute<R>(query, values)).rows;
	}

	/** Runs one statement, given as `query` does; the rows and how many rows it changed. */
	async execute<R extends QueryResultRow>(
		query: SqlQuery | string,
		values: unknown[] = [],
	): Promise<{ rows: R[]; rowCount: number }> {
		await this.ready();
		this.lastUsed = Date.now();
		const statement = typeof query === 'string' ? { text: query, values } : query;
		try {
			const result = await this.pool.query<R>(statement.text, statement.values);
			return { rows: result.rows, rowCount: result.rowCount ?? 0 };
		} catch (error) {
			throw toStoreError(error, this.config);
		}
	}

	/**
	 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled
	 * back when it throws. Every failure goes through the store's error mapping.
	 */
	async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
		await this.ready();
		this.lastUsed = Date.now();
		let client: PoolClient;
		try {
			client = await this.pool.connect();
		} catch (error) {
			throw toStoreError(error, this.config);
		}
		// A connection that ends under a checked-out client (Postgres restarted, the backend was
		// terminated) emits 'error' on the client: unheard, it would end the n8n process. The query
		// in flight fails with it; the broken client is destroyed rather than returned to the pool.
		let broken: Error | undefined;
		const onError = (error: Error) => {
			broken = error;
		};
		client.on('error', onError);
		const tx = new Transaction(client, this.config);
		try {
			await tx.query('BEGIN');
			const result = await work(tx);
			await tx.query('COMMIT');
			return result;
		} catch (error) {
			if (!broken) await client.query('ROLLBACK').catch(() => undefined);
			throw error;
		} finally {
			client.off('error', onError);
			client.release(broken);
		}
	}

	/** Keeps the store open until the returned release is called (a run with writes in flight). */
	hold(): () => void {
		this.holds++;
		let released = false;
		return () => {
			if (released) return;
			released = true;
			this.holds--;
			this.lastUsed = Date.now();
		};
	}

	get held(): boolean {
		return this.holds > 0;
	}

	async close(): Promise<void> {
		await this.pool.end();
	}
}

/** One transaction's connection: statements run in order, errors mapped like the store's. */
export class Transaction {
	constructor(
		private readonly client: PoolClient,
		private readonly config: StoreConfig,
	) {}

	/** Runs one statement on the transaction's connection, given as Store.query takes it. */
	async query<R extends QueryResultRow>(
		query: SqlQuery | string,
		values: unknown[] = [],
	): Promise<R[]> {
		return (await this.execute<R>(query, values)).rows;
	}

	async execute<R extends QueryResultRow>(
		query: SqlQuery | string,
		values: unknown[] = [],
	): Promise<{ rows: R[]; rowCount: number }> {
		const statement = typeof query === 'string' ? { text: query, values } : query;
		try {
			const result = await this.client.query<R>(statement.text, statement.values);
			return { rows: result.rows, rowCount: result.rowCount ?? 0 };
		} catch (error) {
			throw toStoreError(error, this.config);
		}
	}
}

function createPool(config: StoreConfig, tlsFallback: boolean): Pool {
	const pool = new Pool(tlsFallback ? toPoolConfig(config, {}, true) : toPoolConfig(config));
	// An idle client that loses its server (Postgres restart) must not crash the n8n process.
	pool.on('error', () => undefined);
	return pool;
}
