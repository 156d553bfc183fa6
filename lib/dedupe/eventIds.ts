import { createHash } from 'node:crypto';
import { TEXT_LIMITS } from '../limits';
import { LONE_SURROGATE } from '../store/storable';

/**
 * Event IDs as they are stored: text or a number, never a structure (every object would be the
 * same "{}"), never with control characters; longer than MAX_EVENT_ID_LENGTH they are stored as
 * a hash of themselves, since a btree index row cannot hold a few kilobytes.
 */
const MAX_EVENT_ID_LENGTH = TEXT_LIMITS.eventId.max;
const CONTROL = /[\u0000-\u001f\u007f]/;

export function checkedEventId(value: unknown): { id: string } | { problem: string } {
	if (value === undefined || value === null || value === '') return { problem: 'has no event ID' };
	if (typeof value === 'object') {
		return {
			problem: `has an event ID that is ${Array.isArray(value) ? 'a list' : 'an object'}, not text or a number`,
		};
	}
	const text = String(value).trim();
	if (!text) return { problem: 'has no event ID' };
	const control = CONTROL.exec(text);
	if (control) {
		return {
			problem: `has an event ID with a control character (U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}) at position ${control.index}`,
		};
	}
	const lone = LONE_SURROGATE.exec(text);
	if (lone)
		return {
			problem: `has an event ID that is not valid text (half of a surrogate pair at position ${lone.index})`,
		};
	if (text.length > MAX_EVENT_ID_LENGTH) return { id: hashed(text) };
	return { id: text };
}

/** Text this long or longer is kept as its hash, the same text always as the same hash. */
const hashed = (text: string): string =>
	`sha256:${createHash('sha256').update(text).digest('hex')}`;

/**
 * An entity key as it is stored, by the rules of event IDs: never with control characters or
 * half a surrogate pair, and longer than 255 characters as a hash of itself (it is part of an
 * index's key, and only ever compared for equality).
 */
export function checkedEntityKey(key: string): { key: string } | { problem: string } {
	const checked = checkedEventId(key);
	if ('problem' in checked)
		return { problem: checked.problem.replace('an event ID', 'an entity key') };
	return { key: checked.id };
}

const EVENT_LETTER = 'event:';
const HASHED_EVENT_LETTER = 'event:sha256:';

/**
 * The dead-letter key of an inbox item, as the Error handler, Recover and a stopped execution park
 * it: `event:<consumer>:<event ID>`. Both parts may be 255 characters, and a stored key may not:
 * a longer one is `event:sha256:<hex>`, the hash of the whole plain key, so one long item never
 * fails the park of its whole execution. closeDoneEventLettersSql and replayedStepsSql match
 * either form, built in SQL by eventLetterKeySql and hashedEventLetterKeySql below.
 */
export function eventLetterKey(consumer: string, eventId: string): string {
	const key = `${EVENT_LETTER}${consumer}:${eventId}`;
	return key.length > TEXT_LIMITS.idempotencyKey.max
		? `${HASHED_EVENT_LETTER}${createHash('sha256').update(key).digest('hex')}`
		: key;
}

/**
 * eventLetterKey's plain form as a SQL expression, of the SQL expressions of a consumer and an
 * event ID (columns): for statements that find the letters of stored events.
 */
export const eventLetterKeySql = (consumer: string, eventId: string): string =>
	`'${EVENT_LETTER}' || ${consumer} || ':' || ${eventId}`;

/** eventLetterKey's hashed form as a SQL expression, of a plain key's SQL expression. */
export const hashedEventLetterKeySql = (plain: string): string =>
	`'${HASHED_EVENT_LETTER}' || encode(sha256(convert_to(${plain}, 'UTF8')), 'hex')`;
