import { requestFingerprint, type WriteRequest } from '../../lib/idempotency';

/**
 * One item's write for the engine's tests: a POST of `body` to `url` under `key` in `scope`,
 * fingerprinted as the node fingerprints it, with the body as the payload a dead letter keeps.
 * Item 0 unless the caller says; the caller adds what its test is about (a timeout, an item
 * reference, a compensation).
 */
export const writeRequest = ({
	url,
	body,
	...fields
}: Pick<WriteRequest, 'scope' | 'key'> &
	Partial<WriteRequest> & { url: string; body: unknown }): WriteRequest => ({
	index: 0,
	fingerprint: requestFingerprint({ method: 'POST', url, body }),
	payload: body,
	...fields,
});
