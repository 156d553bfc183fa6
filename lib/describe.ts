import { storableText } from './store/storable';

/**
 * A value as an error message may quote it: text in quotes (cut, storable), numbers as they are,
 * anything else by its kind. Never throws, whatever it is given (objects without a prototype,
 * symbols, cycles).
 */
export function describeValue(value: unknown, max = 40): string {
	if (typeof value === 'string') {
		const text = storableText(value);
		return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
	}
	if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
		return String(value);
	if (value === undefined || value === null) return 'nothing';
	if (Array.isArray(value)) return 'a list';
	return `a${typeof value === 'object' ? 'n object' : ` ${typeof value}`}`;
}

/**
 * A value as text, for a filter or a field that takes text: strings as they are, numbers and
 * booleans written out, anything else as JSON (or empty). Never throws.
 */
export function plainText(value: unknown): string {
	if (typeof value === 'string') return value;
	if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
		return String(value);
	if (value === undefined || value === null || typeof value === 'symbol') return '';
	try {
		return JSON.stringify(value) ?? '';
	} catch {
		return '';
	}
}
