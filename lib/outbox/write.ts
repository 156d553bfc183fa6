import { ClaimOutcome } from '../dedupe/outcomes';
import { claimWithWork } from '../dedupe/withWork';
import { ConfigurationError, ItemError, StoreUnavailableError } from '../errors';
import { type Store, sqlStateOf, toStoreError } from '../store';
import {
	runStatements,
	type SqlStatement,
	StatementFailedError,
	type StatementResult,
} from './businessStatements';
import { enqueueMessages, type OutboxWriteContext, type WrittenMessage } from './enqueue';
import type { OutboxMessageInput } from './messages';
import {
	itemSavepointSql,
	lockOrderingKeysSql,
	releaseItemSavepointSql,
	rollbackToItemSavepointSql,
} from './sql';

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

export interface OutboxWriteOptions {
	/** True: a failing item is rolled back alone and reported; false: the whole run is rolled back. */
	continueOnFail: boolean;
}

export type OutboxWriteResult =
	| { index: number; ok: true; statements: StatementResult[]; messages: WrittenMessage[] }
	| { index: number; ok: true; duplicate: true; eventId: string }
	| { index: number; ok: false; error: ItemError };

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
			await tx.query(lockOrderingKeysSql({ keys: orderingKeys, schema: outbox.schema }));
		const results: OutboxWriteResult[] = [];
		for (const item of items) {
			if (options.continueOnFail) await tx.query(itemSavepointSql());
			try {
				if (
					item.event &&
					(await claimWithWork(tx, outbox, {
						index: item.index,
						...item.event,
						workflowId: context.workflowId,
						executionId: context.executionId ?? 'unknown',
					})) === ClaimOutcome.duplicate
				) {
					// Processed before: this delivery does nothing.
					if (options.continueOnFail) await tx.query(releaseItemSavepointSql());
					results.push({
						index: item.index,
						ok: true,
						duplicate: true,
						eventId: item.event.eventId,
					});
					continue;
				}
				const statements = await runStatements(outbox, tx, item.index, item.statements);
				const messages = await enqueueMessages(outbox, tx, item.index, item.messages, context);
				if (options.continueOnFail) await tx.query(releaseItemSavepointSql());
				results.push({ index: item.index, ok: true, statements, messages });
			} catch (caught) {
				const error = toItemError(outbox, caught, item.index);
				if (!options.continueOnFail) throw error;
				await tx.query(rollbackToItemSavepointSql());
				results.push({ index: item.index, ok: false, error });
			}
		}
		return results;
	});
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
