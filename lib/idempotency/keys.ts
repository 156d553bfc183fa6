import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';
import { TEXT_LIMITS } from '../limits';
import { LONE_SURROGATE } from '../store/storable';

/**
 * Keys come from the business operation, never from the attempt: the same source, record,
 * action and version give the same key on every retry, replay and duplicate delivery.
 */
export interface BusinessIdentity {
	source: string;
	recordId: string;
	action: string;
	version: string;
}

export const businessKey = (identity: BusinessIdentity): string =>
	createHash('sha256')
		.update([identity.source, identity.recordId, identity.action, identity.version].join(':'))
		.digest('hex')
		.slice(0, 48);

export interface RequestShape {
	method: string;
	url: string;
	/** Query parameters sent beside the URL's own. */
	query?: Record<string, unknown>;
	body?: unknown;
}

/** A URL whose query string is put in a stable order; a URL without one is left as it is. */
function normalisedUrl(url: string): string {
	const at = url.indexOf('?');
	if (at < 0) return url;
	const params = [...new URLSearchParams(url.slice(at + 1)).entries()].sort(([a, x], [b, y]) =>
		a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1,
	);
	return `${url.slice(0, at)}?${new URLSearchParams(params).toString()}`;
}

/**
 * What makes two requests "the same request" under one key: method, URL with its query (in any
 * order), query parameters and body, with the body's key order ignored. A different fingerprint
 * under a key that succeeded is a conflict. A request without query parameters hashes as it
 * always has, so records written before the query counted stay the same request.
 */
export const requestFingerprint = (request: RequestShape): string => {
	const query = request.query && Object.keys(request.query).length > 0 ? request.query : undefined;
	return createHash('sha256')
		.update(
			canonicalJson({
				method: request.method.toUpperCase(),
				url: normalisedUrl(request.url),
				body: request.body ?? null,
				...(query ? { query } : {}),
			}),
		)
		.digest('hex');
};

/** Keys longer than this are stored (and sent) as a hash of themselves, as Stripe caps keys at 255. */
export const MAX_KEY_LENGTH = TEXT_LIMITS.idempotencyKey.max;

/** Control characters (NUL, newline, DEL...) cannot be part of a key. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What an HTTP header value may carry (RFC 9110 field-vchar, space and tab). */
const HEADER_SAFE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

/**
 * The key as it is stored and sent: refused (with what to fix) when it has a control character,
 * or a character no HTTP header can carry while the key is sent; a hash of itself when longer
 * than MAX_KEY_LENGTH.
 */
export function checkedKey(
	key: string,
	sentAsHeader: boolean,
): { key: string } | { problem: string } {
	const control = CONTROL.exec(key);
	if (control) {
		return {
			problem: `the idempotency key contains a control character (U+${control[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}) at position ${control.index}`,
		};
	}
	const lone = LONE_SURROGATE.exec(key);
	if (lone) {
		return {
			problem: `the idempotency key is not valid text (half of a surrogate pair at position ${lone.index})`,
		};
	}
	if (sentAsHeader && !HEADER_SAFE.test(key)) {
		const bad = [...key].find((c) => !HEADER_SAFE.test(c))!;
		return {
			problem: `the idempotency key contains "${bad}", which an HTTP header cannot carry; use letters, digits and punctuation (or turn off Send Key to Target)`,
		};
	}
	if (key.length > MAX_KEY_LENGTH) return { key: hashedKey(key) };
	return { key };
}

const hashedKey = (key: string): string =>
	`sha256:${createHash('sha256').update(key).digest('hex')}`;

/**
 * A key derived from a stored key, such as a compensation's `<key>:compensate`: never longer than
 * a stored key may be. A derivation that would be longer is stored and sent as its hash, as a
 * long key of the user's is, so a key the user was allowed always gives a derived key that works.
 */
export function derivedKey(key: string, suffix: string): string {
	const derived = `${key}:${suffix}`;
	return derived.length > MAX_KEY_LENGTH ? hashedKey(derived) : derived;
}

/** How the key travels: plain as Stripe expects, or as an RFC 8941 string as the IETF draft has it. */
export const headerValue = (key: string, quoting: 'plain' | 'quoted'): string =>
	quoting === 'quoted' ? `"${key.replace(/["\\]/g, '\\$&')}"` : key;
