import { NOT_SENT_CODES } from './policy';
import type { SendResult, WireWindow } from './types';

/**
 * How long a request may be on the wire: its timeout, cut at the end of the wire window. Zero or
 * less: the lease ended before it left, and it must not be sent (`leaseEnded`).
 */
export const wireBudget = (timeoutMs: number, wire?: WireWindow, now = Date.now()): number =>
	wire ? Math.min(timeoutMs, wire.notAfter - now) : timeoutMs;

/** The code of a request not sent because its attempt's lease had ended (see leaseEnded). */
export const LEASE_ENDED = 'ELEASEENDED';

/** The lease ended before the request left: nothing was sent, the engine asks its fence again. */
export const leaseEnded = (): SendResult => ({
	kind: 'not_sent',
	code: LEASE_ENDED,
	message:
		'the lease of this attempt ended before the request was sent (the run stalled): nothing was sent',
});

/**
 * One request with Node's fetch, for callers outside n8n's HTTP helpers (the console's
 * Compensate, the integration tests): the key in the Idempotency-Key header, a body that is not
 * text sent as JSON, the answer's body parsed as JSON when it is JSON. A connection that was never
 * made is not sent; anything after it was open is lost (the effect may exist). Nothing leaves
 * after the wire window's end, and a request still in flight then is abandoned.
 */
export async function fetchSend(
	request: { method: string; url: string; key: string; body?: unknown },
	timeoutMs: number,
	wire?: WireWindow,
): Promise<SendResult> {
	const left = wireBudget(timeoutMs, wire);
	if (left <= 0) return leaseEnded();
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
			signal: AbortSignal.timeout(left),
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
