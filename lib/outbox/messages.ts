import { plainText } from '../describe';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';
import { ItemError } from '../errors';
import { lengthProblem, TEXT_LIMITS } from '../limits';
import { OUTBOX_METHODS, type OutboxMethod, type OutboxStatus } from './statuses';

/** One message as a Write step hands it over: where it goes, what is sent, and its key. */
export interface OutboxMessageInput {
	/** The system the message goes to (an integration name); keys are unique per destination. */
	destination: string;
	method: OutboxMethod;
	url: string;
	headers: Record<string, string>;
	body: unknown;
	/** Sent as the write's idempotency key: the same on every retry, takeover and replay. */
	idempotencyKey: string;
	/** Messages of one destination and ordering key are sent one after another, in write order. */
	orderingKey?: string;
}

/** A message as Take hands it to the relay. */
export interface OutboxMessage extends OutboxMessageInput {
	id: string;
	/** Increases with every take; Complete and Fail must name the generation they hold. */
	generation: number;
	/** Which take this is, counted from 1. */
	attempt: number;
	status: OutboxStatus;
	takenBy: string | null;
	leaseUntil: Date | null;
	createdAt: Date;
}

/** A message field as text, trimmed (objects as JSON). */
const text = (value: unknown): string => plainText(value).trim();

/** Parses a JSON text when given one; objects and other values pass as they are. */
export function jsonValue(value: unknown, what: string, itemIndex: number): unknown {
	if (typeof value !== 'string') return value ?? null;
	if (value.trim() === '') return null;
	try {
		return JSON.parse(value);
	} catch {
		throw new ItemError(
			`Item ${itemIndex}: the message ${what} is not valid JSON`,
			itemIndex,
			`Fix the ${what} field (an object, or an expression that returns one); nothing was written.`,
		);
	}
}

/**
 * Checks one message of an item and brings it into shape: a destination, a write method, an
 * http(s) URL, headers as name/text pairs and a non-empty idempotency key. A message without a
 * key would make the relay's retries unsafe, so it is an error, never a silent default.
 */
export function parseOutboxMessage(
	raw: Record<string, unknown>,
	itemIndex: number,
	position: number,
): OutboxMessageInput {
	const which = `Item ${itemIndex}, message ${position + 1}`;
	const destination = text(raw.destination);
	if (!destination)
		throw new ItemError(
			`${which} has no destination`,
			itemIndex,
			'Set Destination to the system the message goes to (for example crm); nothing was written.',
		);
	const method = text(raw.method || 'POST').toUpperCase() as OutboxMethod;
	if (!OUTBOX_METHODS.includes(method))
		throw new ItemError(
			`${which} has method ${JSON.stringify(method)}`,
			itemIndex,
			`Use one of ${OUTBOX_METHODS.join(', ')}; nothing was written.`,
		);
	const url = text(raw.url ?? raw.URL);
	if (!/^https?:\/\//i.test(url))
		throw new ItemError(
			`${which} has no usable URL (got ${JSON.stringify(url)})`,
			itemIndex,
			'Set URL to an http:// or https:// address; nothing was written.',
		);
	const idempotencyKey = text(raw.idempotencyKey);
	if (!idempotencyKey)
		throw new ItemError(
			`${which} has no idempotency key`,
			itemIndex,
			'Map the key to the business identity of the message (for example order:123:created), never to a time or a random value; nothing was written.',
		);
	// Destination, key and ordering key are indexed: one too long would fail the item's insert.
	const tooLong =
		lengthProblem(destination, TEXT_LIMITS.destination) ??
		lengthProblem(idempotencyKey, TEXT_LIMITS.idempotencyKey) ??
		lengthProblem(text(raw.orderingKey), TEXT_LIMITS.orderingKey);
	if (tooLong)
		throw new ItemError(`${which}: ${tooLong}`, itemIndex, 'Shorten it; nothing was written.');
	const rawHeaders = jsonValue(raw.headers, 'headers', itemIndex) ?? {};
	if (typeof rawHeaders !== 'object' || Array.isArray(rawHeaders))
		throw new ItemError(
			`${which}: headers must be an object of names and values`,
			itemIndex,
			'For example {"X-Source": "n8n"}; nothing was written.',
		);
	const headers = Object.fromEntries(
		Object.entries(rawHeaders as Record<string, unknown>).map(([name, value]) => [
			name,
			text(value),
		]),
	);
	const orderingKey = text(raw.orderingKey) || undefined;
	return {
		destination,
		method,
		url,
		headers,
		body: jsonValue(raw.body, 'body', itemIndex),
		idempotencyKey,
		orderingKey,
	};
}

/** What makes two writes of one key "the same message": everything that is sent. */
export const messageFingerprint = (message: OutboxMessageInput): string =>
	createHash('sha256')
		.update(
			canonicalJson([
				message.destination,
				message.method,
				message.url,
				message.headers,
				message.body ?? null,
			]),
		)
		.digest('hex');
