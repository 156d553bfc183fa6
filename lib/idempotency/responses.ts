import { maskText, maskValue } from '../masking';
import { storableText } from '../store/storable';
import type { HttpAnswer } from './types';

/** Saved responses: what a success keeps for replays, and the target's own words on a failure. */

const SAVED_HEADERS = [
	'content-type',
	'location',
	'etag',
	'last-modified',
	'idempotency-key',
	'idempotent-replayed',
	'x-request-id',
];

export interface SavedResponse {
	response_status: number;
	response_headers: Record<string, string>;
	response_body: string;
	response_truncated: boolean;
}

/**
 * The target's own words from an error response (a message field of a JSON body, else the
 * text), masked: error bodies often echo what was sent, credentials included.
 */
export const targetMessage = (answer: HttpAnswer, maskFields?: string[]): string =>
	maskText(storableText(messageOf(answer)), maskFields);

function messageOf(answer: HttpAnswer): string {
	const body = answer.body;
	if (body && typeof body === 'object') {
		const b = body as Record<string, unknown>;
		for (const field of ['message', 'error_description', 'detail', 'error', 'title']) {
			const value = b[field];
			if (typeof value === 'string' && value) return value.slice(0, 500);
			if (value && typeof value === 'object') {
				const nested = (value as { message?: unknown }).message;
				if (typeof nested === 'string') return nested.slice(0, 500);
			}
		}
		return JSON.stringify(body).slice(0, 500);
	}
	return typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${answer.status}`;
}

/**
 * Room kept after the saved size when a text body is cut before masking: a secret that starts
 * before the cut is recognised whole if it ends within this, and a quoted value, a header line
 * or a PEM block that runs past it is masked to the end of what is kept.
 */
const CUT_MARGIN = 64 * 1024;

/**
 * A text body is masked only as far as it is saved (plus the margin): masking megabytes that
 * are then thrown away would hold the run. A JSON document is never cut first: it is masked
 * as a structure, and a cut one could not be parsed.
 */
function cutBeforeMasking(body: string, maxChars: number): string {
	if (body.length <= maxChars + CUT_MARGIN) return body;
	const first = body.trimStart()[0];
	if (first === '{' || first === '[') return body;
	return body.slice(0, maxChars + CUT_MARGIN);
}

/**
 * The status, selected headers and body (up to `maxChars`) of a success, for replays, masked:
 * a token-issuing endpoint's answer is never stored as it came, and a replay returns it masked.
 */
export function savedResponse(
	answer: HttpAnswer,
	maxChars: number,
	maskFields?: string[],
): SavedResponse {
	const headers: Record<string, string> = {};
	for (const name of SAVED_HEADERS) {
		const value = answer.headers[name];
		if (value !== undefined)
			headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	const raw =
		typeof answer.body === 'string'
			? cutBeforeMasking(answer.body, maxChars)
			: (JSON.stringify(maskValue(answer.body ?? null, maskFields)) ?? 'null');
	const text = maskText(storableText(raw), maskFields);
	const cut = typeof answer.body === 'string' && raw.length < answer.body.length;
	return {
		response_status: answer.status,
		response_headers: maskValue(headers, maskFields),
		response_body: text.slice(0, maxChars),
		response_truncated: cut || text.length > maxChars,
	};
}

/** A saved response as the answer of a replay; a truncated body stays text and says so. */
export function fromSaved(row: {
	response_status: number | null;
	response_headers: Record<string, string> | null;
	response_body: string | null;
	response_truncated?: boolean | null;
}): HttpAnswer {
	const text = row.response_body ?? 'null';
	const headers = row.response_headers ?? {};
	const status = row.response_status ?? 200;
	if (row.response_truncated) return { status, headers, body: text, truncated: true };
	let body: unknown = text;
	try {
		body = JSON.parse(text);
	} catch {
		/* a text body stays text */
	}
	return { status, headers, body };
}
