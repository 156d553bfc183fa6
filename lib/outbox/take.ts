import { ConfigurationError } from '../errors';
import type { Store } from '../store';
import type { OutboxMessage } from './messages';
import { takeMessagesSql } from './sql';
import type { OutboxMethod, OutboxStatus } from './statuses';

export interface TakeRequest {
	/** At most this many messages. */
	limit: number;
	/** How long the taker owns them; after that they are takeable again (with a new generation). */
	leaseSeconds: number;
	/** Recorded as the owner: the execution ID of the relay run. */
	takenBy: string;
	/** Only messages for this destination (a relay per destination); empty: all. */
	destination?: string;
}

export interface MessageRow {
	id: string;
	destination: string;
	method: OutboxMethod;
	url: string;
	headers: Record<string, string> | null;
	body: unknown;
	idempotency_key: string;
	ordering_key: string | null;
	status: OutboxStatus;
	generation: number;
	attempts: number;
	taken_by: string | null;
	lease_until: Date | null;
	created_at: Date;
}

export const messageFromRow = (row: MessageRow): OutboxMessage => ({
	id: row.id,
	destination: row.destination,
	method: row.method,
	url: row.url,
	headers: row.headers ?? {},
	body: row.body,
	idempotencyKey: row.idempotency_key,
	orderingKey: row.ordering_key ?? undefined,
	status: row.status,
	generation: row.generation,
	attempt: row.attempts,
	takenBy: row.taken_by,
	leaseUntil: row.lease_until,
	createdAt: row.created_at,
});

/**
 * Claims up to `limit` takeable messages in one statement, oldest first, under a lease. Two
 * takers at once never get the same message (FOR UPDATE SKIP LOCKED), and messages of one
 * ordering key are handed out one at a time, in order.
 */
export async function takeMessages(outbox: Store, request: TakeRequest): Promise<OutboxMessage[]> {
	if (!Number.isInteger(request.limit) || request.limit < 1)
		throw new ConfigurationError(
			`Max messages ${JSON.stringify(request.limit)} is not a positive whole number`,
			'Set Max Messages to 1 or more.',
		);
	if (!(request.leaseSeconds > 0))
		throw new ConfigurationError(
			`Lease ${JSON.stringify(request.leaseSeconds)} s is not positive`,
			'Set Lease to more seconds than sending a message takes, retries included.',
		);
	const rows = await outbox.query<MessageRow>(
		takeMessagesSql(outbox, {
			limit: request.limit,
			takenBy: request.takenBy,
			destination: request.destination?.trim() || null,
			leaseSeconds: request.leaseSeconds,
		}),
	);
	return rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)).map(messageFromRow);
}
