import { claimWithWork } from '../dedupe/withWork';
import { ConfigurationError, ItemError, StoreUnavailableError } from '../errors';
import { type Store, sqlStateOf, toStoreError, type Transaction } from '../store';
import { messageFingerprint, type OutboxMessageInput } from './messages';
import { existingMessagesSql, insertMessagesSql, lockOrderingKeysSql } from './sql';

/** One of the user's SQL statements: text with $1, $2... and the values bound to them. */
export interface SqlStatement {
	text: string;
	values: unknown[];
}

/** One input item of a Write: its business statements and the messages they announce. */
export interface OutboxWriteItem {
	index: number;
	statements: SqlStatement[];
	messages: OutboxMessageInput[];
	/**
	 * The event this item handles, claimed done in the same transaction as its statements and
	 * messages: a duplicate does nothing; a failing item leaves the event unclaimed.
	 */
	event?: { consumer: string; eventId: string; retentionDays: number };
}

/** Who wrote the messages (recorded with them). */
export interface OutboxWriteContext {
	workflowId?: string;
	executionId?: string;
	node?: string;
}

export interface OutboxWriteOptions {
	/** True: a failing item is rolled back alone and reported; false: the whole run is rolled back. */
	continueOnFail: boolean;
}

interface WrittenMessage {
	id: string;
	destination: string;
	idempotencyKey: string;
	orderingKey: string | null;
	/** False when the key was already in the outbox with the same content: nothing was added. */
	enqueued: boolean;
}

interface StatementResult {
	rowCount: number;
	rows: Array<Record<string, unknown>>;
}

export type OutboxWriteResult =
	| { index: number; ok: true; statements: StatementResult[]; messages: WrittenMessage[] }
	| { index: number; ok: true; duplicate: true; eventId: string }
	| { index: number; ok: false; error: ItemError };

/** A business statement failed: its item wrote nothing, neither rows nor messages. */
export class StatementFailedError extends ItemError {
	constructor(
		message: string,
		itemIndex: number,
		hint: string,
		readonly sqlState: string | undefined,
		cause: unknown,
	) {
		super(message, itemIndex, hint);
		this.cause = cause;
	}
}

/** The same key written again with other content: a programming or mapping error. */
export class MessageConflictError extends ItemError {}

/** Statements run inside the node's transaction; one that ends or opens a transaction would break it. */
const TRANSACTION_CONTROL =
	/^\s*(begin|commit|rollback|end|abort|start\s+transaction|savepoint|release|prepare\s+transaction)\b/i;

function refuseTransactionControl(statement: SqlStatement, itemIndex: number, position: number) {
	if (statement.text.split(';').some((part) => TRANSACTION_CONTROL.test(part)))
		throw new ItemError(
			`Item ${itemIndex}, statement ${position + 1} controls the transaction itself`,
			itemIndex,
			'The node runs the statements and the messages in one transaction of its own; remove BEGIN, COMMIT, ROLLBACK and SAVEPOINT from the statements.',
		);
}

const keyOf = (m: { destination: string; idempotencyKey: string }): string =>
	JSON.stringify([m.destination, m.idempotencyKey]);

/**
 * Runs each item's statements and adds its messages in one transaction for the whole run.
 *
 * Why one transaction per run, with a savepoint per item, rather than a transaction per item:
 * when the run fails (an item fails and the node does not continue on fail), nothing of the run
 * is committed, so n8n's retry of the execution, or a redelivery, does not write the earlier
 * items' business rows a second time. With continue-on-fail, each item runs under a savepoint:
 * a failing statement rolls back that item's rows and messages, and the others commit together.
 * Either way a business row never commits without its messages, nor a message without its row.
 */
export async function writeWithMessages(
	outbox: Store,
	items: OutboxWriteItem[],
	context: OutboxWriteContext,
	options: OutboxWriteOptions,
): Promise<OutboxWriteResult[]> {
	if (items.length === 0) return [];
	const orderingKeys = [
		...new Set(
			items.flatMap((item) =>
				item.messages
					.filter((m) => m.orderingKey)
					.map((m) => JSON.stringify([m.destination, m.orderingKey])),
			),
		),
	];
	return await outbox.transaction(async (tx) => {
		if (orderingKeys.length > 0)
			await tx.query(lockOrderingKeysSql(), [orderingKeys, outbox.schema]);
		const results: OutboxWriteResult[] = [];
		for (const item of items) {
			if (options.continueOnFail) await tx.query('SAVEPOINT outbox_item');
			try {
				if (
					item.event &&
					(await claimWithWork(tx, outbox, {
						index: item.index,
						...item.event,
						workflowId: context.workflowId,
						executionId: context.executionId ?? 'unknown',
					})) === 'duplicate'
				) {
					// Processed before: this delivery does nothing.
					if (options.continueOnFail) await tx.query('RELEASE SAVEPOINT outbox_item');
					results.push({
						index: item.index,
						ok: true,
						duplicate: true,
						eventId: item.event.eventId,
					});
					continue;
				}
				const written = await writeItem(outbox, tx, item, context);
				if (options.continueOnFail) await tx.query('RELEASE SAVEPOINT outbox_item');
				results.push({ index: item.index, ok: true, ...written });
			} catch (caught) {
				const error = toItemError(outbox, caught, item.index);
				if (!options.continueOnFail) throw error;
				await tx.query('ROLLBACK TO SAVEPOINT outbox_item');
				results.push({ index: item.index, ok: false, error });
			}
		}
		return results;
	});
}

async function writeItem(
	outbox: Store,
	tx: Transaction,
	item: OutboxWriteItem,
	context: OutboxWriteContext,
): Promise<{ statements: StatementResult[]; messages: WrittenMessage[] }> {
	const statements: StatementResult[] = [];
	for (const [position, statement] of item.statements.entries()) {
		refuseTransactionControl(statement, item.index, position);
		try {
			const answer = await tx.execute(statement.text, statement.values);
			// A text of several statements (possible without parameters) reports no rows.
			statements.push({ rowCount: answer.rowCount, rows: answer.rows ?? [] });
		} catch (error) {
			throw statementError(outbox, error, item.index, position);
		}
	}

	// The same key twice in one item: one message when the content agrees, else a conflict.
	const unique = new Map<string, OutboxMessageInput & { fingerprint: string }>();
	for (const message of item.messages) {
		const fingerprint = messageFingerprint(message);
		const seen = unique.get(keyOf(message));
		if (seen && seen.fingerprint !== fingerprint) throw conflict(item.index, message);
		unique.set(keyOf(message), { ...message, fingerprint });
	}
	if (unique.size === 0) return { statements, messages: [] };
	const rows = [...unique.values()].map((m, ord) => ({
		ord,
		destination: m.destination,
		method: m.method,
		url: m.url,
		headers: m.headers,
		body: m.body ?? null,
		idempotency_key: m.idempotencyKey,
		fingerprint: m.fingerprint,
		ordering_key: m.orderingKey ?? null,
		workflow_id: context.workflowId ?? null,
		execution_id: context.executionId ?? null,
		node: context.node ?? null,
	}));
	const inserted = await tx.query<{ id: string; destination: string; idempotency_key: string }>(
		insertMessagesSql(outbox),
		[JSON.stringify(rows)],
	);
	const ids = new Map(
		inserted.map((r) => [
			keyOf({ destination: r.destination, idempotencyKey: r.idempotency_key }),
			r.id,
		]),
	);
	// Keys already in the outbox (an earlier run, or an earlier item of this one): read in a
	// statement of its own, so that a row another run committed meanwhile is seen too.
	const missing = [...unique.values()].filter((m) => !ids.has(keyOf(m)));
	const existing = new Map<string, { id: string; fingerprint: string }>();
	if (missing.length > 0) {
		const found = await tx.query<{
			id: string;
			destination: string;
			idempotency_key: string;
			fingerprint: string;
		}>(existingMessagesSql(outbox), [
			missing.map((m) => m.destination),
			missing.map((m) => m.idempotencyKey),
		]);
		for (const r of found)
			existing.set(keyOf({ destination: r.destination, idempotencyKey: r.idempotency_key }), r);
	}
	const messages = item.messages.map((message): WrittenMessage => {
		const key = keyOf(message);
		const newId = ids.get(key);
		const old = existing.get(key);
		if (!newId && old && old.fingerprint !== unique.get(key)!.fingerprint)
			throw conflict(item.index, message);
		return {
			id: newId ?? old?.id ?? '',
			destination: message.destination,
			idempotencyKey: message.idempotencyKey,
			orderingKey: message.orderingKey ?? null,
			enqueued: newId !== undefined,
		};
	});
	return { statements, messages };
}

const conflict = (itemIndex: number, message: OutboxMessageInput): MessageConflictError =>
	new MessageConflictError(
		`Item ${itemIndex}: idempotency key "${message.idempotencyKey}" is already in the outbox of ${message.destination} with other content`,
		itemIndex,
		'A key names one message: derive it from the business operation and its version, so a changed message gets a new key. Nothing of this item was written.',
	);

function statementError(
	outbox: Store,
	error: unknown,
	itemIndex: number,
	position: number,
): unknown {
	const mapped = toStoreError(error, outbox.config);
	if (mapped instanceof StoreUnavailableError) return mapped;
	const code = sqlStateOf(error);
	const e = error as { message?: string; detail?: string; hint?: string };
	return new StatementFailedError(
		`Item ${itemIndex}: statement ${position + 1} failed: ${e.message ?? String(error)}${code ? ` (SQLSTATE ${code})` : ''}`,
		itemIndex,
		[
			e.detail,
			e.hint,
			'Nothing of this item was written: neither its rows nor its outbox messages.',
		]
			.filter(Boolean)
			.join(' '),
		code,
		error,
	);
}

/** Errors that end one item; a store that went away ends the run instead (rethrown). */
function toItemError(outbox: Store, error: unknown, itemIndex: number): ItemError {
	if (error instanceof ItemError) return error;
	// A store that is down, or a setting of the whole run, fails the run rather than one item.
	if (error instanceof StoreUnavailableError || error instanceof ConfigurationError) throw error;
	const mapped = toStoreError(error, outbox.config);
	if (mapped instanceof StoreUnavailableError) throw mapped;
	return new StatementFailedError(
		`Item ${itemIndex}: writing its outbox messages failed: ${error instanceof Error ? error.message : String(error)}`,
		itemIndex,
		'Nothing of this item was written: neither its rows nor its outbox messages.',
		sqlStateOf(error),
		error,
	);
}
