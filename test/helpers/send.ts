import { fetchSend } from '../../lib/idempotency/fetchSend';
import type { SendResult, WireWindow, WriteRequest } from '../../lib/idempotency';

/**
 * The engine's send for integration tests: a real HTTP POST of the item's body with the
 * engine's own fetch sender (the key in the Idempotency-Key header; refused = not sent, anything
 * after the connection was open = lost, the effect may exist).
 */
export function fetchSender(
	url: string,
	bodyOf: (request: WriteRequest) => unknown,
	timeoutMs = 5_000,
) {
	return async (request: WriteRequest, _attempt?: number, wire?: WireWindow): Promise<SendResult> =>
		await fetchSend(
			{ method: 'POST', url, key: request.key, body: bodyOf(request) },
			timeoutMs,
			wire,
		);
}
