import { getDeadLetters } from '../../lib/deadletter';
import {
	DEFAULT_POLICY,
	requestFingerprint,
	runWrites,
	type WriteContext,
	type WriteRequest,
} from '../../lib/idempotency';
import { fileTarget } from '../helpers/target';
import { writeContext } from '../helpers/writeContext';
import { adminQuery, testStore } from '../helpers/store';

/**
 * Conditional writes (seed 002: "check the expected version ... This prevents an old retry from
 * overwriting a newer human decision"): a write carries the version it was built on; a target
 * that holds another one refuses it, and the write ends as a conflict for a person, never retried.
 */
const { store, schema, cleanup } = testStore('conditional');
const target = fileTarget();
afterAll(cleanup);

const context = (executionId: string): WriteContext =>
	writeContext({
		workflowId: 'wf-cond',
		executionId,
		node: 'Update Invoice',
		policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
		concurrency: 1,
		maxSavedBodyChars: 10_000,
	});

/** PUT the invoice with If-Match, as the node builds it. */
function conditionalPut(url: string, body: unknown, etag: string) {
	const request: WriteRequest = {
		index: 0,
		scope: 'billing',
		key: 'INV-20931:set-amount',
		fingerprint: requestFingerprint({ method: 'PUT', url, body }),
		payload: body,
		precondition: { header: 'If-Match', value: etag },
	};
	return runWrites(store, context(`exec-${Math.random()}`), [request], {
		send: async () => {
			const response = await fetch(url, {
				method: 'PUT',
				headers: {
					'content-type': 'application/json',
					'if-match': etag,
					'idempotency-key': request.key,
				},
				body: JSON.stringify(body),
			});
			return {
				kind: 'response',
				answer: {
					status: response.status,
					headers: Object.fromEntries(response.headers.entries()),
					body: await response.json(),
				},
			};
		},
	});
}

it('an old retry after a person changed the record is refused, parked with both versions, and the record keeps their value', async () => {
	const url = target.route('/invoice', { honoursKey: false, versioned: true });
	target.change('/invoice', { amount: 100 }, 'import');
	// The write was built on version 1; the ledger is down for its attempts.
	target.script('/invoice', { status: 503 }, { status: 503 });
	const [first] = await conditionalPut(url, { amount: 120 }, '"v1"');
	expect(first.failure).toMatchObject({ class: 'exhausted' });
	// Meanwhile a person corrects the amount by hand.
	target.change('/invoice', { amount: 90 }, 'maria');
	// The sender delivers again (or someone replays): the same write, still built on version 1.
	const [retry] = await conditionalPut(url, { amount: 120 }, '"v1"');
	expect(retry.failure).toMatchObject({ class: 'conflict', status: 412 });
	expect(retry.failure!.message).toMatch(/expected If-Match: "v1", the target holds "v2"/);
	expect(target.records.get('/invoice')).toEqual({
		version: 2,
		value: { amount: 90 },
		writtenBy: 'maria',
	});
	// Not retried: one request for the conflict.
	expect(target.requestsTo('/invoice')).toHaveLength(3);
	const [parked] = await getDeadLetters(store, [retry.failure!.deadLetterId!]);
	expect(parked).toMatchObject({ error_class: 'conflict', error_status: 412, status: 'new' });
	const [key] = await adminQuery<{ status: string }>(
		`SELECT status FROM "${schema}".idempotency_keys WHERE key = 'INV-20931:set-amount'`,
	);
	expect(key.status).toBe('failed');
});

it('a write built on the current version goes through', async () => {
	const url = target.route('/invoice-2', { honoursKey: false, versioned: true });
	target.change('/invoice-2', { amount: 100 }, 'import');
	const [done] = await conditionalPut(url, { amount: 130 }, '"v1"');
	expect(done.ok).toBe(true);
	expect(target.records.get('/invoice-2')).toEqual({
		version: 2,
		value: { amount: 130 },
		writtenBy: 'a write',
	});
});
