/**
 * Postgres text and jsonb cannot hold U+0000 or half of a surrogate pair, and a batch that
 * carries one fails whole. Text from outside (a target's message, a response body, a payload)
 * is made storable first: each such character becomes U+FFFD, the replacement character;
 * everything else stays as it was.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export const storableText = (text: string): string => text.replace(UNSTORABLE, '\uFFFD');

/** The same for any JSON value, at any depth (keys included). */
export function storableValue<T>(value: T): T {
	if (typeof value === 'string') return storableText(value) as T;
	if (Array.isArray(value)) return value.map(storableValue) as T;
	if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
		const out: Record<string, unknown> = {};
		for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
			out[storableText(key)] = storableValue(child);
		}
		return out as T;
	}
	return value;
}
