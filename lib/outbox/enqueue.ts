import { ItemError } from '../errors';
import type { Store, Transaction } from '../store';
import { messageFingerprint, type OutboxMessageInput } from './messages';
import { existingMessagesSql, insertMessagesSql } from './sql';

/**
 * Adding a Write item's messages: a key names one message per destination, so a key written
 * again with the same content adds nothing, and with other content is a conflict.
 */

/** Who wrote the messages (recorded with them). */
export interface OutboxWriteContext {
	workflowId?: string;
	executionId?: string;
	node?: string;
}

/** A message of the item, added now or found in the outbox with the same content. */
export interface WrittenMessage {
	id: string;
	destination: string;
	idempotencyKey: string;
	orderingKey: string | null;
	/** False when the key was already in the outbox with the same content: nothing was added. */
	enqueued: boolean;
}

/** The same key written again with other content: a programming or mapping error. */
export class MessageConflictError extends ItemError {}

const keyOf = (m: { destination: string; idempotencyKey: string }): string =>
	JSON.stringify([m.destination, m.idempotencyKey]);

/** Adds an item's messages, in the item's transaction; returns one entry per message, in order. */
export async function enqueueMessages(
	outbox: Store,
	tx: Transaction,
	itemIndex: number,
	messages: OutboxMessageInput[],
	context: OutboxWriteContext,
): Promise<WrittenMessage[]> {
	// The same key twice in one item: one message when the content agrees, else a conflict.
	const unique = new Map<string, OutboxMessageInput & { fingerprint: string }>();
	for (const message of messages) {
		const fingerprint = messageFingerprint(message);
		const seen = unique.get(keyOf(message));
		if (seen && seen.fingerprint !== fingerprint) throw conflict(itemIndex, message);
		unique.set(keyOf(message), { ...message, fingerprint });
	}
	if (unique.size === 0) return [];
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
		insertMessagesSql(outbox, { messages: rows }),
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
		}>(
			existingMessagesSql(outbox, {
				destinations: missing.map((m) => m.destination),
				idempotencyKeys: missing.map((m) => m.idempotencyKey),
			}),
		);
		for (const r of found)
			existing.set(keyOf({ destination: r.destination, idempotencyKey: r.idempotency_key }), r);
	}
	return messages.map((message): WrittenMessage => {
		const key = keyOf(message);
		const newId = ids.get(key);
		const old = existing.get(key);
		if (!newId && old && old.fingerprint !== unique.get(key)!.fingerprint)
			throw conflict(itemIndex, message);
		return {
			id: newId ?? old?.id ?? '',
			destination: message.destination,
			idempotencyKey: message.idempotencyKey,
			orderingKey: message.orderingKey ?? null,
			enqueued: newId !== undefined,
		};
	});
}

const conflict = (itemIndex: number, message: OutboxMessageInput): MessageConflictError =>
	new MessageConflictError(
		`Item ${itemIndex}: idempotency key "${message.idempotencyKey}" is already in the outbox of ${message.destination} with other content`,
		itemIndex,
		'A key names one message: derive it from the business operation and its version, so a changed message gets a new key. Nothing of this item was written.',
	);
