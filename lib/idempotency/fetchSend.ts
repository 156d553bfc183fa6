import { NOT_SENT_CODES } from './policy';
import type { SendResult } from './types';

/**
 * One request with Node's fetch, for callers outside n8n's HTTP helpers (the console's
 * Compensate, the integration tests): the key in the Idempotency-Key header, a body that is not
 * text sent as JSON, the answer's body parsed as JSON when it is JSON. A connection that was never
 * made is not sent; anything after it was open is lost (the effect may exist).
 */
export async function fetchSend(
	request: { method: string; url: string; key: string; body?: unknown },
	timeoutMs: number,
): Promise<SendResult> {
	try {
		const json = request.body !== undefined && typeof request.body !== 'string';
		const response = await fetch(request.url, {
			method: request.method,
			headers: {
				'idempotency-key': request.key,
				...(json ? { 'content-type': 'application/json' } : {}),
			},
			body:
				request.body === undefined
					? undefined
					: json
						? JSON.stringify(request.body)
						: String(request.body),
			signal: AbortSignal.timeout(timeoutMs),
		});
		const text = await response.text();
		let body: unknown = text;
		try {
			body = JSON.parse(text);
		} catch {
			/* a text body stays text */
		}
		return {
			kind: 'response',
			answer: {
				status: response.status,
				headers: Object.fromEntries(response.headers.entries()),
				body,
			},
		};
	} catch (error) {
		const code = String(
			(error as { cause?: { code?: unknown } }).cause?.code ??
				(error as { name?: unknown }).name ??
				'ERROR',
		);
		return {
			kind: NOT_SENT_CODES.has(code) ? 'not_sent' : 'lost',
			code,
			message: error instanceof Error ? error.message : String(error),
		};
	}
}
