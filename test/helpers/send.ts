import type { HttpAnswer, SendResult, WriteRequest } from '../../lib/idempotency';

/**
 * The engine's send for integration tests: a real HTTP POST with Node's fetch, the key in the
 * Idempotency-Key header, errors mapped as the node maps n8n's: refused = not sent, anything
 * after the connection was open = lost (the effect may exist).
 */
export function fetchSender(
	url: string,
	bodyOf: (request: WriteRequest) => unknown,
	timeoutMs = 5_000,
) {
	return async (request: WriteRequest): Promise<SendResult> => {
		try {
			const response = await fetch(url, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'idempotency-key': request.key },
				body: JSON.stringify(bodyOf(request)),
				signal: AbortSignal.timeout(timeoutMs),
			});
			const text = await response.text();
			let body: unknown = text;
			try {
				body = JSON.parse(text);
			} catch {
				/* text */
			}
			return {
				kind: 'response',
				answer: {
					status: response.status,
					headers: Object.fromEntries(response.headers.entries()),
					body,
				} satisfies HttpAnswer,
			};
		} catch (error) {
			const code = ((error as { cause?: { code?: string } }).cause?.code ??
				(error as { name?: string }).name ??
				'ERROR') as string;
			return {
				kind: code === 'ECONNREFUSED' ? 'not_sent' : 'lost',
				code,
				message: (error as Error).message,
			};
		}
	};
}
