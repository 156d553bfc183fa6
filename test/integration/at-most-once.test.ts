import { getDeadLetters } from '../../lib/deadletter';
import { runWrites, type WriteContext, type WriteRequest } from '../../lib/idempotency';
import { fileTarget } from '../helpers/target';
import { fetchSender } from '../helpers/send';
import { writeContexts } from '../helpers/writeContext';
import { adminQuery, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';
import { sleep } from '../helpers/sleep';

/**
 * At most one effect per key, against a real HTTP target that commits and then answers an error:
 * under *Reconcile by lookup* and *Park for review* only an answer that proves nothing was done is
 * retried blindly; under *Retry with the same key* the target's key makes the retry safe.
 */
const { store, schema, cleanup } = testStore('once');
const target = fileTarget();
afterAll(cleanup);

const context = writeContexts({
	workflowId: 'wf-once',
	node: 'Post',
	onUnknown: 'lookup',
	inFlightGraceMs: 20,
});
const TIMEOUT_MS = 300;
const write = (key: string, body: unknown) =>
	writeRequest({ scope: 'once', key, url: '/x', body, timeoutMs: TIMEOUT_MS });
const keyStatus = async (key: string) =>
	(
		await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".idempotency_keys WHERE scope = 'once' AND key = $1`,
			[key],
		)
	)[0]?.status;

/** Writes one item to a route, with the target's lookup by key; counts the lookups. */
async function writeOnce(route: string, key: string, ctx: WriteContext) {
	const body = { name: key };
	let lookups = 0;
	const [outcome] = await runWrites(store, ctx, [write(key, body)], {
		send: fetchSender(target.url(route), () => body, TIMEOUT_MS),
		lookup: async (request) => {
			lookups++;
			const response = await fetch(
				target.url(`${route}/by-key/${encodeURIComponent(request.key)}`),
			);
			const found = await response.json();
			return response.status === 200
				? { kind: 'exists', answer: { status: 200, headers: {}, body: found } }
				: { kind: 'absent' };
		},
	});
	return { outcome, lookups };
}

describe('an answer that does not prove nothing was done is an unknown outcome', () => {
	it.each([502, 500, 504, 408])(
		'reconcile by lookup: a %i after the target committed is looked up, never resent: one effect',
		async (status) => {
			const route = `/commit-then-${status}`;
			target.route(route, { honoursKey: false });
			target.script(route, { commitThen: status });
			const { outcome, lookups } = await writeOnce(route, `lookup-${status}`, context());
			expect(target.effectsOf(route)).toHaveLength(1);
			expect(target.requestsTo(route)).toHaveLength(1);
			expect(lookups).toBe(1);
			expect(outcome).toMatchObject({ ok: true, replayed: true });
			expect(await keyStatus(`lookup-${status}`)).toBe('succeeded');
		},
	);

	it('reconcile by lookup: a 502 before any commit is looked up, found absent, and sent again once', async () => {
		const route = '/fail-502';
		target.route(route, { honoursKey: false });
		target.script(route, { status: 502 });
		const { outcome, lookups } = await writeOnce(route, 'lookup-absent', context());
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(target.requestsTo(route)).toHaveLength(2);
		expect(lookups).toBe(1);
		expect(outcome).toMatchObject({ ok: true, replayed: false, attempts: 2 });
		expect(await keyStatus('lookup-absent')).toBe('succeeded');
	});

	it('park for review: a 502 after the target committed parks the item unknown: one effect', async () => {
		const route = '/park-502';
		target.route(route, { honoursKey: false });
		target.script(route, { commitThen: 502 });
		const { outcome, lookups } = await writeOnce(route, 'park-502', context({ onUnknown: 'park' }));
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(target.requestsTo(route)).toHaveLength(1);
		expect(lookups).toBe(0);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome', status: 502 });
		expect(outcome.failure!.message).toMatch(/does not prove nothing was done/);
		expect(await keyStatus('park-502')).toBe('unknown');
		const [letter] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(letter.status).toBe('new');
		// A redelivery of the same key is not sent either: the record stays unknown for a person.
		const again = await writeOnce(route, 'park-502', context({ onUnknown: 'park' }));
		expect(again.outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect(target.effectsOf(route)).toHaveLength(1);
	});

	it('park for review: a 429, or a 503 with Retry-After, proves nothing was done and is retried', async () => {
		const route = '/refused';
		target.route(route, { honoursKey: false });
		target.script(route, { status: 429 }, { status: 503, retryAfter: '0' });
		const { outcome } = await writeOnce(route, 'refused', context({ onUnknown: 'park' }));
		expect(outcome).toMatchObject({ ok: true, attempts: 3 });
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(await keyStatus('refused')).toBe('succeeded');
	});

	it('park for review: a 503 without Retry-After is an unknown outcome', async () => {
		const route = '/park-503';
		target.route(route, { honoursKey: false });
		target.script(route, { commitThen: 503 });
		const { outcome } = await writeOnce(route, 'park-503', context({ onUnknown: 'park' }));
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome', status: 503 });
		expect(target.effectsOf(route)).toHaveLength(1);
	});

	it('retry with the same key: a 502 after the commit is retried and the target answers from the key', async () => {
		const route = '/keyed-502';
		target.route(route, { honoursKey: true });
		target.script(route, { commitThen: 502 });
		const { outcome, lookups } = await writeOnce(
			route,
			'keyed-502',
			context({ onUnknown: 'retry' }),
		);
		expect(target.requestsTo(route)).toHaveLength(2);
		expect(lookups).toBe(0);
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(outcome).toMatchObject({ ok: true, attempts: 2 });
		expect(await keyStatus('keyed-502')).toBe('succeeded');
	});
});

describe('the target commit horizon', () => {
	// The request's timeout ends at 300 ms; the target commits it at 900 ms, 600 ms later. A
	// lookup before that finds nothing and resends: beyond the horizon, two effects.
	it.each([
		[0, 2],
		[1_000, 1],
	])(
		'a commit 600 ms after the timeout, with a horizon of %i ms: %i effect(s)',
		async (horizonMs, effects) => {
			const route = `/late-${horizonMs}`;
			target.route(route, { honoursKey: false });
			target.script(route, { delayMs: 900 });
			const { outcome, lookups } = await writeOnce(
				route,
				`late-${horizonMs}`,
				context({ inFlightGraceMs: horizonMs }),
			);
			// Let the late request land before counting.
			await sleep(1_000);
			expect(lookups).toBe(1);
			expect(outcome.ok).toBe(true);
			expect(target.effectsOf(route)).toHaveLength(effects);
		},
	);
});

describe("the default scope follows the node's ID", () => {
	it('records of the name-based scope move to the ID-based one, and a rename later resends nothing', async () => {
		const route = '/scoped';
		target.route(route, { honoursKey: false });
		const body = { name: 'scoped' };
		const request = (scope: string, key: string): WriteRequest => ({
			...write(key, body),
			scope,
		});
		const send = fetchSender(target.url(route), () => body, TIMEOUT_MS);
		// Written by an earlier version: the scope was the workflow and the node's name.
		const [before] = await runWrites(store, context(), [request('wf-once:Post', 'k-1')], {
			send,
		});
		const [unknownBefore] = await runWrites(
			store,
			context({ onUnknown: 'park' }),
			[request('wf-once:Post', 'k-2')],
			{ send: async () => ({ kind: 'lost', code: 'ECONNRESET', message: 'socket hang up' }) },
		);
		expect([before.ok, unknownBefore.failure?.class]).toEqual([true, 'unknown_outcome']);

		// This version: the node's ID; the node is then renamed twice.
		for (const name of ['Post', 'Create Contact', 'Create Person']) {
			const outcomes = await runWrites(
				store,
				context({
					onUnknown: 'park',
					adoptScope: { from: `wf-once:${name}`, to: 'wf-once:node-7' },
				}),
				[request('wf-once:node-7', 'k-1'), { ...request('wf-once:node-7', 'k-2'), index: 1 }],
				{ send },
			);
			expect(outcomes[0]).toMatchObject({ ok: true, replayed: true });
			expect(outcomes[1].failure?.class).toBe('unknown_outcome');
		}
		expect(target.effectsOf(route)).toHaveLength(1);
		const scopes = await adminQuery<{ scope: string; key: string; status: string }>(
			`SELECT scope, key, status FROM "${schema}".idempotency_keys WHERE key IN ('k-1', 'k-2') ORDER BY key`,
		);
		expect(scopes).toEqual([
			{ scope: 'wf-once:node-7', key: 'k-1', status: 'succeeded' },
			{ scope: 'wf-once:node-7', key: 'k-2', status: 'unknown' },
		]);
	});
});
