import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';

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
	body?: unknown;
}

/**
 * What makes two requests "the same request" under one key: method, URL and body, with the
 * body's key order ignored. A different fingerprint under a key that succeeded is a conflict.
 */
export const requestFingerprint = (request: RequestShape): string =>
	createHash('sha256')
		.update(
			canonicalJson({
				method: request.method.toUpperCase(),
				url: request.url,
				body: request.body ?? null,
			}),
		)
		.digest('hex');

/** How the key travels: plain as Stripe expects, or as an RFC 8941 string as the IETF draft has it. */
export const headerValue = (key: string, quoting: 'plain' | 'quoted'): string =>
	quoting === 'quoted' ? `"${key.replace(/["\\]/g, '\\$&')}"` : key;
