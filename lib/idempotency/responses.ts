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

/** The target's own words from an error response: a message field of a JSON body, else the text. */
export const targetMessage = (answer: HttpAnswer): string => storableText(messageOf(answer));

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

/** The status, selected headers and body (up to `maxChars`) of a success, for replays. */
export function savedResponse(answer: HttpAnswer, maxChars: number): SavedResponse {
	const headers: Record<string, string> = {};
	for (const name of SAVED_HEADERS) {
		const value = answer.headers[name];
		if (value !== undefined)
			headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	const text = storableText(
		typeof answer.body === 'string' ? answer.body : (JSON.stringify(answer.body ?? null) ?? 'null'),
	);
	return {
		response_status: answer.status,
		response_headers: headers,
		response_body: text.slice(0, maxChars),
		response_truncated: text.length > maxChars,
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
