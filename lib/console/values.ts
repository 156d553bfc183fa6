import { plainText } from '../describe';
import { storableText } from '../store/storable';

/** Request values as the console reads them. */

/** A request value as text: the first of a repeated one, storable, trimmed. */
export const str = (value: unknown): string =>
	storableText(Array.isArray(value) ? str(value[0]) : plainText(value)).trim();

export const objectOrEmpty = (value: unknown): Record<string, unknown> =>
	value !== null && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: {};
