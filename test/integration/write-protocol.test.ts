import { getDeadLetters, takeForReplay } from '../../lib/deadletter';
import { resume } from '../../lib/control/pauses';
import {
	DEFAULT_POLICY,
	runWrites,
	type SendResult,
	type WriteContext,
	type WriteDeps,
	type WriteRequest,
} from '../../lib/idempotency';
import { claimKeys } from '../../lib/idempotency/claim';
import { RunLeases } from '../../lib/idempotency/lease';
import { getStore, Store, sweepIdleStores } from '../../lib/store';
import { fileTarget } from '../helpers/target';
import { fetchSender } from '../helpers/send';
import { writeContexts } from '../helpers/writeContext';
import { adminQuery, storeConfig, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';
import { writeRequest } from '../helpers/writeRequest';
import { sleep } from '../helpers/sleep';

/**
 * The write protocol's guarantees, each shown on the schedule that once broke it: bounded
 * loops, leases that follow the work, expiry that never overrides an open record, a breaker
 * that counts streaks and always releases what it holds, per-item isolation, a pool that stays
 * open under a write, and fenced settles.
 */
const { store, schema, cleanup } = testStore('wproto');
const target = fileTarget();
afterAll(cleanup);

const context = writeContexts({ workflowId: 'wf-proto', node: 'Post' });
const write = (
	key: string,
	body: unknown,
	index = 0,
	timeoutMs = 2_000,
): WriteRequest & { body: unknown } => ({
	...writeRequest({ index, scope: 'proto', key, url: '/x', body, timeoutMs }),
	body,
});
const bodies = new Map<string, unknown>();
const send = (route: string, timeoutMs = 2_000) =>
	fetchSender(target.url(route), (r) => bodies.get(`${r.key}#${r.index}`), timeoutMs);
const run = (
	route: string,
	ctx: WriteContext,
	requests: Array<WriteRequest & { body: unknown }>,
	deps: Partial<WriteDeps> = {},
	s: Store = store,
) => {
	for (const r of requests) bodies.set(`${r.key}#${r.index}`, r.body);
	return runWrites(s, ctx, requests, { send: send(route), ...deps });
};
const keyRow = async (key: string) =>
	(
		await adminQuery<{
			status: string;
			generation: string;
			attempts: number;
			history: Array<Record<string, unknown>>;
		}>(
			`SELECT status, generation, attempts, history FROM "${schema}".idempotency_keys WHERE scope = 'proto' AND key = $1`,
			[key],
		)
	)[0];
/** A lookup that asks the test target for the effect of a key. */
const lookupAt = (route: string) => async (request: WriteRequest) => {
	const response = await fetch(target.url(`${route}/by-key/${encodeURIComponent(request.key)}`));
	const body = await response.json();
	return response.status === 200
		? ({ kind: 'exists', answer: { status: 200, headers: {}, body } } as const)
		: ({ kind: 'absent' } as const);
};
/** A send that waits at a gate before it goes, so a test can act while it is "in flight". */
function gated(inner: (r: WriteRequest) => Promise<SendResult>) {
	let open!: () => void;
	const gate = new Promise<void>((resolve) => (open = resolve));
	let arrived!: () => void;
	const waiting = new Promise<void>((resolve) => (arrived = resolve));
	return {
		send: async (r: WriteRequest) => {
			arrived();
			await gate;
			return await inner(r);
		},
		waiting,
		open: () => open(),
	};
}

describe('every loop is bounded', () => {
	it('reconcile by lookup resends within the attempt cap, with backoff, when every response is lost', async () => {
		target.route('/lost-always', { honoursKey: false });
		target.script(
			'/lost-always',
			...Array.from({ length: 50 }, () => ({ reset: 'before' as const })),
		);
		const started = Date.now();
		const [outcome] = await run(
			'/lost-always',
			context({
				onUnknown: 'lookup',
				inFlightGraceMs: 20,
				policy: {
					...DEFAULT_POLICY,
					maxAttempts: 3,
					baseDelayMs: 50,
					maxDelayMs: 100,
					deadlineMs: 20_000,
				},
			}),
			[write('lost-always', { n: 1 }, 0, 300)],
			{ lookup: lookupAt('/lost-always'), send: send('/lost-always', 300) },
		);
		expect(target.requestsTo('/lost-always')).toHaveLength(3);
		expect(target.effectsOf('/lost-always')).toHaveLength(0);
		expect(outcome.ok).toBe(false);
		expect(outcome.failure!.class).toBe('exhausted');
		// Nothing reached the target, the lookup says so: a definite failure, claimable again.
		expect((await keyRow('lost-always')).status).toBe('failed');
		// Each lookup waited for its attempt's window (300 ms + grace) before reading the target.
		expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 320);
		expect((await getDeadLetters(store, [outcome.failure!.deadLetterId!]))[0].status).toBe('new');
	});

	it('a lookup that cannot reach the target is retried within the budget, then the item is unknown', async () => {
		target.route('/lost-lookup-down', { honoursKey: false });
		target.script('/lost-lookup-down', { reset: 'after' });
		let lookups = 0;
		const [outcome, other] = await run(
			'/lost-lookup-down',
			context({
				onUnknown: 'lookup',
				inFlightGraceMs: 10,
				policy: { ...DEFAULT_POLICY, maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
			}),
			[write('lookup-down', { n: 1 }, 0, 200), write('lookup-down-other', { n: 2 }, 1, 200)],
			{
				send: send('/lost-lookup-down', 200),
				lookup: async () => {
					lookups++;
					throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), {
						code: 'ECONNREFUSED',
					});
				},
			},
		);
		expect(lookups).toBe(3);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect((await keyRow('lookup-down')).status).toBe('unknown');
		// The other item of the run kept its own outcome.
		expect(other.ok).toBe(true);
		expect((await keyRow('lookup-down-other')).status).toBe('succeeded');
	});
});

describe('leases follow the work', () => {
	it('an item waiting behind the concurrency keeps its key while the run lives: no second send', async () => {
		target.route('/queued', { honoursKey: false });
		// The first item keeps the only lane busy for far longer than one lease.
		target.script('/queued', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
		const slow = context({
			concurrency: 1,
			leaseMarginMs: 300,
			policy: {
				...DEFAULT_POLICY,
				maxAttempts: 5,
				baseDelayMs: 300,
				maxDelayMs: 300,
				deadlineMs: 20_000,
			},
		});
		const first = run(
			'/queued',
			slow,
			[write('busy', { n: 1 }, 0, 200), write('queued', { n: 2 }, 1, 200)],
			{
				random: () => 1,
			},
		);
		// Well after the queued item's first lease (500 ms) would have ended, another execution wants it.
		await sleep(1_200);
		const [second] = await run('/queued', context(), [write('queued', { n: 2 }, 0, 200)]);
		const outcomes = await first;
		expect(outcomes.every((o) => o.ok)).toBe(true);
		expect(second.ok).toBe(true);
		expect(second.replayed).toBe(true);
		expect(
			target.effectsOf('/queued').filter((e) => (e.body as { n: number }).n === 2),
		).toHaveLength(1);
	});

	it('the claim starts the first attempt of the items sent at once, not of the queued ones', async () => {
		target.route('/prestarted');
		const lane = gated((r) => send('/prestarted')(r));
		const outcomes = run(
			'/prestarted',
			context({ concurrency: 1 }),
			[write('prestarted-0', { n: 0 }), write('prestarted-1', { n: 1 }, 1)],
			{ send: async (r) => (r.index === 0 ? await lane.send(r) : await send('/prestarted')(r)) },
		);
		await lane.waiting;
		const started = await adminQuery<{ key: string; attempts: number; started: boolean }>(
			`SELECT key, attempts, attempt_started_at IS NOT NULL AS started FROM "${schema}".idempotency_keys
			 WHERE scope = 'proto' AND key LIKE 'prestarted-%' ORDER BY key`,
		);
		// The first item is in flight on the claim's attempt start; the queued one has none yet, so
		// an owner dying now leaves it failed (claimable), not unknown.
		expect(started).toEqual([
			{ key: 'prestarted-0', attempts: 1, started: true },
			{ key: 'prestarted-1', attempts: 0, started: false },
		]);
		lane.open();
		expect((await outcomes).map((o) => [o.ok, o.attempts])).toEqual([
			[true, 1],
			[true, 1],
		]);
		expect((await keyRow('prestarted-1')).attempts).toBe(1);
		expect(target.effectsOf('/prestarted')).toHaveLength(2);
	});

	it('an owner that dies between its claim and its send leaves the key unknown, never sent blind', async () => {
		target.route('/died-before-send', { honoursKey: false });
		const ctx = context({ leaseMarginMs: 100, onUnknown: 'park' });
		const item = write('died-before-send', { n: 1 }, 0, 200);
		// The owner claims (its first attempt started with the claim) and dies before sending.
		await claimKeys(store, ctx, new RunLeases(store, Date.now), [item], 1);
		await sleep(400);
		const [outcome] = await run('/died-before-send', context({ onUnknown: 'park' }), [item]);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect((await keyRow('died-before-send')).status).toBe('unknown');
		expect(target.requestsTo('/died-before-send')).toHaveLength(0);
	});

	it('a waiter that gives up just before the owner succeeds leaves no open dead letter', async () => {
		target.route('/gave-up');
		const owner = gated((r) => send('/gave-up')(r));
		const first = run('/gave-up', context(), [write('gave-up', { n: 1 })], { send: owner.send });
		await owner.waiting;
		// The waiter's park goes out only once the owner has succeeded: the owner's settle found no
		// letter of the key to close.
		let released = false;
		const racing = new Proxy(store, {
			get(target, prop, receiver) {
				const value = Reflect.get(target, prop, receiver);
				if (prop !== 'query') return value;
				return async (sql: string | { text: string }, ...rest: unknown[]) => {
					const text = typeof sql === 'string' ? sql : sql.text;
					if (!released && /INSERT INTO\s+\S*dead_letters\b/.test(text)) {
						released = true;
						owner.open();
						await first;
					}
					return await (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
				};
			},
		});
		const [waiter] = await run(
			'/gave-up',
			context({ policy: { ...DEFAULT_POLICY, deadlineMs: 300 } }),
			[write('gave-up', { n: 1 })],
			{},
			racing,
		);
		const [done] = await first;
		expect(done).toMatchObject({ ok: true, replayed: false });
		expect(waiter.failure).toMatchObject({ class: 'unknown_outcome' });
		expect((await keyRow('gave-up')).status).toBe('succeeded');
		const letters = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".dead_letters WHERE workflow_id = 'wf-proto' AND idempotency_key = 'gave-up'`,
		);
		expect(letters).toEqual([{ status: 'replayed' }]);
		expect(target.effectsOf('/gave-up')).toHaveLength(1);
	});

	it('an owner stopped after a lost answer, taken over before its park, leaves no open dead letter', async () => {
		target.route('/stopped-lost', { honoursKey: true });
		// A's only attempt commits and its answer is lost; A is stopped while it backs off.
		target.script('/stopped-lost', { reset: 'after' });
		const stop = new AbortController();
		let taken: Promise<unknown> | undefined;
		// Between A's settle (the record says unknown) and A's park, B takes the record over and
		// succeeds: B's close finds no letter of the key yet.
		const racing = new Proxy(store, {
			get(target, prop, receiver) {
				const value = Reflect.get(target, prop, receiver);
				if (prop !== 'query') return value;
				return async (sql: string | { text: string }, ...rest: unknown[]) => {
					const text = typeof sql === 'string' ? sql : sql.text;
					if (!taken && /INSERT INTO\s+\S*dead_letters\b/.test(text)) {
						taken = run('/stopped-lost', context(), [write('stopped-lost', { n: 1 })]);
						await taken;
					}
					return await (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
				};
			},
		});
		const [a] = await run(
			'/stopped-lost',
			context({ policy: { ...DEFAULT_POLICY, baseDelayMs: 5_000, maxDelayMs: 5_000 } }),
			[write('stopped-lost', { n: 1 })],
			{
				signal: stop.signal,
				send: async (r) => {
					const result = await send('/stopped-lost')(r);
					stop.abort();
					return result;
				},
			},
			racing,
		);
		const [b] = (await taken) as Array<{ ok: boolean; replayed: boolean }>;
		expect(a.failure).toMatchObject({ class: 'unknown_outcome' });
		expect(b).toMatchObject({ ok: true });
		expect((await keyRow('stopped-lost')).status).toBe('succeeded');
		const letters = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".dead_letters WHERE workflow_id = 'wf-proto' AND idempotency_key = 'stopped-lost'`,
		);
		// Parked (the item was in a letter) and closed: the key's record says this request succeeded.
		expect(letters).toEqual([{ status: 'replayed' }]);
		expect(target.effectsOf('/stopped-lost')).toHaveLength(1);
	});

	it("an owner whose key was taken over sends nothing more and takes the new owner's result", async () => {
		target.route('/taken', { honoursKey: true });
		target.script('/taken', { status: 503 });
		const a = context({ policy: { ...DEFAULT_POLICY, baseDelayMs: 800, maxDelayMs: 800 } });
		const first = run('/taken', a, [write('taken', { n: 1 }, 0, 200)], { random: () => 1 });
		// While A backs off after its 503, its lease is cut short (its process stalled, say) and B takes over.
		await sleep(200);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET lease_until = now() - interval '1 second' WHERE scope = 'proto' AND key = 'taken'`,
		);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'unknown' WHERE scope = 'proto' AND key = 'taken'`,
		);
		const [b] = await run('/taken', context(), [write('taken', { n: 1 }, 0, 200)]);
		const [outcomeA] = await first;
		expect(b.ok).toBe(true);
		expect(outcomeA).toMatchObject({ ok: true, replayed: true, superseded: true });
		// A sent once (the 503), B once: A never sent after it lost the key.
		expect(target.requestsTo('/taken')).toHaveLength(2);
		expect(target.effectsOf('/taken')).toHaveLength(1);
		const row = await keyRow('taken');
		expect(row.status).toBe('succeeded');
		expect(Number(row.generation)).toBe(2);
	});

	it('a superseded owner whose key then succeeded for another request parks its item as a conflict', async () => {
		target.route('/sup-other', { honoursKey: true });
		target.script('/sup-other', { status: 503 });
		const a = context({ policy: { ...DEFAULT_POLICY, baseDelayMs: 800, maxDelayMs: 800 } });
		const first = run('/sup-other', a, [write('sup-other', { n: 1 }, 0, 200)], {
			random: () => 1,
		});
		// While A backs off after its 503, another execution takes the key over and succeeds with
		// a different request.
		await sleep(200);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'succeeded', fingerprint = 'another request',
			 generation = generation + 1, execution_id = 'exec-other', response_status = 201, completed_at = now()
			 WHERE scope = 'proto' AND key = 'sup-other'`,
		);
		const [outcomeA] = await first;
		expect(outcomeA).toMatchObject({ ok: false, superseded: true, failure: { class: 'conflict' } });
		expect(target.requestsTo('/sup-other')).toHaveLength(1);
		// The item is in a letter a person reads: the key succeeded, but not with this request.
		const letters = await adminQuery<{ status: string; error_class: string }>(
			`SELECT status, error_class FROM "${schema}".dead_letters WHERE idempotency_key = 'sup-other'`,
		);
		expect(letters).toEqual([{ status: 'new', error_class: 'conflict' }]);
	});

	it("a superseded owner's failure is parked, and closed at once when the key succeeded for this request", async () => {
		target.route('/sup-same', { honoursKey: true });
		target.script('/sup-same', { status: 503 }, { status: 503 }, { status: 503 });
		const a = context({
			policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 400, maxDelayMs: 400 },
		});
		const hold = gated(send('/sup-same'));
		let sends = 0;
		const first = run('/sup-same', a, [write('sup-same', { n: 1 }, 0, 200)], {
			random: () => 1,
			// A's second attempt stalls on its way out until the key is someone else's.
			send: async (r) => (++sends === 1 ? await send('/sup-same')(r) : await hold.send(r)),
		});
		await hold.waiting;
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'succeeded', generation = generation + 1,
			 execution_id = 'exec-other', response_status = 201, completed_at = now()
			 WHERE scope = 'proto' AND key = 'sup-same'`,
		);
		hold.open();
		const [outcomeA] = await first;
		expect(outcomeA).toMatchObject({ ok: false, superseded: true });
		const letters = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".dead_letters WHERE idempotency_key = 'sup-same'`,
		);
		// Parked (the item was in a letter) and closed: the key's record says this request succeeded.
		expect(letters).toEqual([{ status: 'replayed' }]);
	});

	it("a superseded owner's late answer is kept, and its proof of an effect settles an unknown record", async () => {
		target.route('/late', { honoursKey: true });
		const hold = gated(send('/late'));
		const a = context();
		const first = run('/late', a, [write('late', { n: 1 })], { send: hold.send });
		await hold.waiting;
		// A stalls with its request about to go out; its lease runs out and B takes the key over.
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET lease_until = now() - interval '1 second' WHERE scope = 'proto' AND key = 'late'`,
		);
		target.script(
			'/late',
			{ status: 503 },
			{ status: 503 },
			{ status: 503 },
			{ status: 503 },
			{ status: 503 },
		);
		const [b] = await run(
			'/late',
			context({ policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 } }),
			[write('late', { n: 1 })],
		);
		// B cannot know whether A's request landed: unknown, parked, never "failed".
		expect(b.failure).toMatchObject({ class: 'unknown_outcome' });
		expect((await keyRow('late')).status).toBe('unknown');
		hold.open();
		const [outcomeA] = await first;
		expect(outcomeA.ok).toBe(true);
		// A's answer proves the effect: the record is succeeded, with A's response and both histories.
		const row = await keyRow('late');
		expect(row.status).toBe('succeeded');
		expect(row.history.map((h) => h.execution)).toEqual(expect.arrayContaining([a.executionId]));
		expect(target.effectsOf('/late')).toHaveLength(1);
		// B's dead letter is closed: the work is done.
		expect((await getDeadLetters(store, [b.failure!.deadLetterId!]))[0].status).toBe('replayed');
	});

	it('a success proven while a dead owner holds the key is settled once that owner is gone', async () => {
		// Found by the model check under load: A's answer is lost after the commit, A stalls past
		// its lease, B abandons A's record and takes it over, then B dies. A's lookup finds the
		// effect, but its settle is refused (B holds generation 2). Without more, A reports success
		// while B's record, abandoned later, says unknown for ever, and the item is in no letter.
		target.route('/proven', { honoursKey: false });
		let lookupNow!: () => void;
		const lookupGate = new Promise<void>((resolve) => (lookupNow = resolve));
		let looking!: () => void;
		const lookingUp = new Promise<void>((resolve) => (looking = resolve));
		const a = context({ onUnknown: 'lookup', inFlightGraceMs: 0 });
		const first = run('/proven', a, [write('proven', { n: 1 }, 0, 200)], {
			send: async (r) => {
				await send('/proven')(r);
				return { kind: 'lost', code: 'ECONNRESET', message: 'socket hang up (after commit)' };
			},
			lookup: async () => {
				looking();
				await lookupGate;
				return { kind: 'exists', answer: { status: 200, headers: {}, body: { id: 1 } } };
			},
		});
		await lookingUp;
		// B: the lease lapsed, so abandoned (unknown, one attempt made) and taken over; then B dies.
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'in_progress', generation = generation + 1,
			 execution_id = 'exec-dead-b', lease_until = now() + interval '600 milliseconds'
			 WHERE scope = 'proto' AND key = 'proven'`,
		);
		lookupNow();
		const [outcomeA] = await first;
		expect(outcomeA.ok).toBe(true);
		// A waited out B's lease and settled what it saw: done, the one effect, nothing for a person.
		const row = await keyRow('proven');
		expect(row.status).toBe('succeeded');
		expect(target.effectsOf('/proven')).toHaveLength(1);
		const letters = await adminQuery(
			`SELECT id FROM "${schema}".dead_letters WHERE idempotency_key = 'proven' AND is_open`,
		);
		expect(letters).toEqual([]);
	});
});

describe('expiry never overrides an open record', () => {
	it('a record past its retention but in progress under a live lease is waited for, not claimed', async () => {
		target.route('/expired-live', { honoursKey: false });
		await adminQuery(
			`INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, execution_id, expires_at)
			 VALUES ('proto', 'expired-live', $1, 'in_progress', now() + interval '1 hour', 'other', now() - interval '1 day')`,
			[write('expired-live', { n: 1 }).fingerprint],
		);
		const [outcome] = await run(
			'/expired-live',
			context({ policy: { ...DEFAULT_POLICY, deadlineMs: 500 } }),
			[write('expired-live', { n: 1 })],
		);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect(target.requestsTo('/expired-live')).toHaveLength(0);
	});

	it('an unknown record past its retention is reconciled, never sent blind', async () => {
		target.route('/expired-unknown', { honoursKey: false });
		await adminQuery(
			`INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, execution_id, expires_at, attempts)
			 VALUES ('proto', 'expired-unknown', $1, 'unknown', now() - interval '1 day', 'other', now() - interval '1 day', 1)`,
			[write('expired-unknown', { n: 1 }).fingerprint],
		);
		const [outcome] = await run('/expired-unknown', context({ onUnknown: 'park' }), [
			write('expired-unknown', { n: 1 }),
		]);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect(target.requestsTo('/expired-unknown')).toHaveLength(0);
	});

	it('a retention under a day, or not a whole number of days, is refused with the allowed range', async () => {
		for (const retentionDays of [0, 0.5]) {
			await expect(run('/never', context({ retentionDays }), [write('never', {})])).rejects.toThrow(
				`Retention (Days) must be a whole number from 1 to 3650, got ${retentionDays}`,
			);
		}
	});
});

describe('the circuit breaker', () => {
	const breaker = (threshold: number, coolDownSeconds = 60) =>
		context({
			integration: `api-${threshold}-${coolDownSeconds}`,
			breaker: { threshold, coolDownSeconds },
			policy: { ...DEFAULT_POLICY, maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
		});

	it('a transient failure in a run that otherwise succeeds does not count toward opening it', async () => {
		target.route('/healthy');
		const ctx = breaker(2);
		for (let round = 0; round < 3; round++) {
			target.script('/healthy', { status: 503 });
			const outcomes = await run(
				'/healthy',
				{ ...ctx, executionId: context.nextExecutionId(), concurrency: 1 },
				Array.from({ length: 3 }, (_, i) => write(`healthy-${round}-${i}`, { round, i }, i)),
			);
			expect(outcomes.every((o) => o.ok)).toBe(true);
		}
		// No streak at all: the row was never written (a run of successes on a clean breaker
		// records nothing), or it was and says no failures.
		const rows = await adminQuery<{ consecutive_failures: number; open_until: Date | null }>(
			`SELECT consecutive_failures, open_until FROM "${schema}".breakers WHERE integration = $1`,
			[ctx.integration],
		);
		expect(rows.filter((r) => r.consecutive_failures > 0 || r.open_until !== null)).toEqual([]);
	});

	it('a success ends the streak of failures other runs recorded while it was sending', async () => {
		target.route('/streak');
		const ctx = breaker(4);
		const breakerRow = async () =>
			(
				await adminQuery<{ consecutive_failures: number; open_until: Date | null }>(
					`SELECT consecutive_failures, open_until FROM "${schema}".breakers WHERE integration = $1`,
					[ctx.integration],
				)
			)[0];
		const slow = gated(send('/streak'));
		const success = run(
			'/streak',
			{ ...ctx, executionId: context.nextExecutionId() },
			[write('streak-ok', { n: 1 })],
			{
				send: slow.send,
			},
		);
		await slow.waiting;
		// Another run fails three times (under the threshold of four) while the first one sends.
		target.script('/streak', { status: 503 }, { status: 503 }, { status: 503 });
		const [failed] = await run('/streak', { ...ctx, executionId: context.nextExecutionId() }, [
			write('streak-fail-1', { n: 2 }),
		]);
		expect(failed.failure!.class).toBe('exhausted');
		expect(await breakerRow()).toEqual({ consecutive_failures: 3, open_until: null });
		slow.open();
		expect((await success)[0].ok).toBe(true);
		expect(await breakerRow()).toEqual({ consecutive_failures: 0, open_until: null });
		// Three more failures start a new streak: still under the threshold, the breaker stays closed.
		target.script('/streak', { status: 503 }, { status: 503 }, { status: 503 });
		await run('/streak', { ...ctx, executionId: context.nextExecutionId() }, [
			write('streak-fail-2', { n: 3 }),
		]);
		expect(await breakerRow()).toEqual({ consecutive_failures: 3, open_until: null });
	});

	it('items it held go back to replay once its cool-down is over, and nothing stays held', async () => {
		target.route('/outage');
		target.script('/outage', { status: 503 }, { status: 503 }, { status: 503 });
		const ctx = breaker(3, 1);
		const [failed] = await run('/outage', ctx, [write('outage-1', { n: 1 })]);
		expect(failed.failure!.class).toBe('exhausted');
		const [held] = await run('/outage', { ...ctx, executionId: 'exec-held' }, [
			write('outage-2', { n: 2 }),
		]);
		expect(held.failure!.class).toBe('paused');
		const [record] = await getDeadLetters(store, [held.failure!.deadLetterId!]);
		expect(record).toMatchObject({ status: 'held', hold_reason: 'breaker' });

		await sleep(1_100);
		const taken = await takeForReplay(store, { taker: 'replay run 1', limit: 10 });
		expect(taken.map((t) => t.id)).toContain(record.id);
		const [after] = await getDeadLetters(store, [record.id]);
		expect(after.status).toBe('being_fixed');
		expect(after.history.map((h) => `${h.fromStatus}>${h.toStatus}`)).toEqual([
			'null>held',
			'held>replay_requested',
			'replay_requested>being_fixed',
		]);
	});

	it('an effect found by its lookup ends the streak: the breaker stays closed', async () => {
		target.route('/found', { honoursKey: false });
		// Refused once (a transient failure the breaker counts), then committed with the answer lost.
		target.script('/found', { reset: 'after' });
		let calls = 0;
		const ctx = {
			...breaker(2),
			onUnknown: 'lookup' as const,
			inFlightGraceMs: 10,
			policy: { ...DEFAULT_POLICY, maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 },
		};
		const [outcome] = await run('/found', ctx, [write('found-1', { n: 1 }, 0, 200)], {
			send: async (request) =>
				calls++ === 0
					? { kind: 'not_sent', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }
					: await send('/found', 200)(request),
			lookup: lookupAt('/found'),
		});
		expect(outcome).toMatchObject({ ok: true, replayed: true });
		// No streak at all: the row was never written (a run of successes on a clean breaker
		// records nothing), or it was and says no failures.
		const rows = await adminQuery<{ consecutive_failures: number; open_until: Date | null }>(
			`SELECT consecutive_failures, open_until FROM "${schema}".breakers WHERE integration = $1`,
			[ctx.integration],
		);
		expect(rows.filter((r) => r.consecutive_failures > 0 || r.open_until !== null)).toEqual([]);
	});

	it('while held, a key that already succeeded is answered from its saved response, not held', async () => {
		target.route('/held-done');
		const ctx = breaker(5);
		const [first] = await run('/held-done', ctx, [write('held-done', { n: 1 })]);
		expect(first.ok).toBe(true);
		await adminQuery(
			`INSERT INTO "${schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', $1, true, 'ops', 'maintenance')`,
			[ctx.integration],
		);
		const sent = target.requestsTo('/held-done').length;
		const [again, fresh] = await run(
			'/held-done',
			{ ...ctx, executionId: context.nextExecutionId() },
			[write('held-done', { n: 1 }, 0), write('held-new', { n: 2 }, 1)],
		);
		expect(again).toMatchObject({ ok: true, replayed: true });
		expect(fresh.failure).toMatchObject({ class: 'paused' });
		expect(target.requestsTo('/held-done')).toHaveLength(sent);
		const letters = await adminQuery<{ idempotency_key: string; status: string }>(
			`SELECT idempotency_key, status FROM "${schema}".dead_letters WHERE integration = $1`,
			[ctx.integration],
		);
		expect(letters).toEqual([{ idempotency_key: 'held-new', status: 'held' }]);
	});

	it('while the breaker is open, another request under a succeeded key is a conflict for a person, not held; past its retention it is held', async () => {
		target.route('/held-conflict');
		const ctx = breaker(6);
		const firsts = await run('/held-conflict', ctx, [
			write('held-conflict', { n: 1 }, 0),
			write('held-renewable', { n: 1 }, 1),
		]);
		expect(firsts.every((o) => o.ok)).toBe(true);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET expires_at = now() - interval '1 day' WHERE scope = 'proto' AND key = 'held-renewable'`,
		);
		await adminQuery(
			`INSERT INTO "${schema}".breakers (integration, consecutive_failures, open_until) VALUES ($1, 6, now() + interval '1 minute') ON CONFLICT (integration) DO UPDATE SET open_until = EXCLUDED.open_until`,
			[ctx.integration],
		);
		const sent = target.requestsTo('/held-conflict').length;
		const [conflict, renewal] = await run(
			'/held-conflict',
			{ ...ctx, executionId: context.nextExecutionId() },
			[write('held-conflict', { n: 2 }, 0), write('held-renewable', { n: 2 }, 1)],
		);
		expect(conflict.failure).toMatchObject({
			class: 'conflict',
			message: expect.stringContaining('already succeeded with a different request'),
		});
		expect(renewal.failure).toMatchObject({ class: 'paused' });
		expect(target.requestsTo('/held-conflict')).toHaveLength(sent);
		const letters = await adminQuery<{
			idempotency_key: string;
			status: string;
			error_class: string;
		}>(
			`SELECT idempotency_key, status, error_class FROM "${schema}".dead_letters WHERE integration = $1 ORDER BY idempotency_key`,
			[ctx.integration],
		);
		expect(letters).toEqual([
			{ idempotency_key: 'held-conflict', status: 'new', error_class: 'conflict' },
			{ idempotency_key: 'held-renewable', status: 'held', error_class: 'paused' },
		]);
		expect(await keyRow('held-conflict')).toMatchObject({ status: 'succeeded', attempts: 1 });
	});

	it('while held, two requests under one key in a run are each answered for their own request', async () => {
		target.route('/held-twice');
		const ctx = breaker(7);
		const [first] = await run('/held-twice', ctx, [write('held-twice', { n: 1 })]);
		expect(first.ok).toBe(true);
		await adminQuery(
			`INSERT INTO "${schema}".breakers (integration, consecutive_failures, open_until) VALUES ($1, 7, now() + interval '1 minute') ON CONFLICT (integration) DO UPDATE SET open_until = EXCLUDED.open_until`,
			[ctx.integration],
		);
		const sent = target.requestsTo('/held-twice').length;
		for (const order of [
			[1, 2],
			[2, 1],
		]) {
			const outcomes = await run(
				'/held-twice',
				{ ...ctx, executionId: context.nextExecutionId() },
				order.map((n, i) => write('held-twice', { n }, i)),
			);
			expect(outcomes.map((o) => (o.ok ? 'replayed' : o.failure!.class))).toEqual(
				order.map((n) => (n === 1 ? 'replayed' : 'conflict')),
			);
		}
		const [twiceNew, twiceNewAgain] = await run(
			'/held-twice',
			{ ...ctx, executionId: context.nextExecutionId() },
			[write('held-twice-new', { n: 1 }, 0), write('held-twice-new', { n: 1 }, 1)],
		);
		expect([twiceNew.failure?.class, twiceNewAgain.failure?.class]).toEqual(['paused', 'paused']);
		expect(target.requestsTo('/held-twice')).toHaveLength(sent);
		const letters = await adminQuery<{
			idempotency_key: string;
			status: string;
			error_class: string;
		}>(
			`SELECT idempotency_key, status, error_class FROM "${schema}".dead_letters WHERE integration = $1 ORDER BY idempotency_key`,
			[ctx.integration],
		);
		expect(letters).toEqual([
			{ idempotency_key: 'held-twice', status: 'new', error_class: 'conflict' },
			{ idempotency_key: 'held-twice-new', status: 'held', error_class: 'paused' },
		]);
	});

	it('a hold that ended before its record was written goes to replay, not held', async () => {
		const [parked] = await parkAll(store, [
			{
				workflowId: 'wf-proto',
				step: 'Post',
				idempotencyKey: 'resumed-meanwhile',
				integration: 'never-paused',
				errorClass: 'paused',
				status: 'held',
				holdReason: 'pause',
				payload: { n: 1 },
			},
		]);
		expect(parked.status).toBe('replay_requested');
	});

	it('a park racing a resume never leaves a held record behind', async () => {
		for (let round = 0; round < 20; round++) {
			const integration = `race-${round}`;
			await adminQuery(
				`INSERT INTO "${schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', $1, true, 'ops', 'outage')`,
				[integration],
			);
			const parkers = Array.from({ length: 5 }, (_, i) => {
				const s = new Store(storeConfig(schema));
				return parkAll(s, [
					{
						workflowId: 'wf-proto',
						step: 'Post',
						idempotencyKey: `${integration}-${i}`,
						integration,
						errorClass: 'paused',
						status: 'held',
						holdReason: 'pause',
						payload: { i },
					},
				]).finally(() => s.close());
			});
			await Promise.all([...parkers, resume(store, 'integration', integration, 'ops', 'back')]);
		}
		const stuck = await adminQuery(
			`SELECT d.id FROM "${schema}".dead_letters d WHERE d.status = 'held' AND d.integration LIKE 'race-%'
			 AND NOT EXISTS (SELECT 1 FROM "${schema}".pauses p WHERE p.scope = 'integration' AND p.name = d.integration AND p.paused)`,
		);
		expect(stuck).toEqual([]);
	});

	it.each([
		['paused', 'pause'],
		['breaker opened', 'breaker'],
	] as const)(
		'a waiter whose key failed meanwhile re-claims it through the gate: %s, it is held, not sent',
		async (_, hold) => {
			target.route(`/again-${hold}`);
			const ctx = breaker(7);
			const integration = `${ctx.integration}-${hold}`;
			// The owner holds the key "in flight" while a second execution of the same item waits.
			const owner = gated(async (): Promise<SendResult> => ({
				kind: 'response',
				answer: { status: 422, headers: {}, body: { error: 'invalid phone' } },
			}));
			const first = run(
				`/again-${hold}`,
				{ ...ctx, integration },
				[write(`again-${hold}`, { n: 1 })],
				{
					send: owner.send,
				},
			);
			await owner.waiting;
			const waiter = run(
				`/again-${hold}`,
				{ ...ctx, integration, executionId: context.nextExecutionId() },
				[write(`again-${hold}`, { n: 1 })],
			);
			await sleep(150);
			// Before the owner's failure is settled the integration stops taking writes.
			if (hold === 'pause')
				await adminQuery(
					`INSERT INTO "${schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', $1, true, 'ops', 'outage')`,
					[integration],
				);
			else
				await adminQuery(
					`INSERT INTO "${schema}".breakers (integration, consecutive_failures, open_until) VALUES ($1, 7, now() + interval '1 minute')`,
					[integration],
				);
			owner.open();
			const [[failed], [held]] = await Promise.all([first, waiter]);
			expect(failed.failure).toMatchObject({ class: 'permanent', status: 422 });
			expect(held.failure).toMatchObject({ class: 'paused' });
			// The waiter sent nothing and left the key failed (claimable once the integration is back).
			expect(target.requestsTo(`/again-${hold}`)).toHaveLength(0);
			expect((await keyRow(`again-${hold}`)).status).toBe('failed');
			const [letter] = await getDeadLetters(store, [held.failure!.deadLetterId!]);
			expect(letter).toMatchObject({ status: 'held', hold_reason: hold });
		},
	);
});

describe('one item ends alone', () => {
	it('a Retry-After of a million years, a NUL in the answer and a bad lookup end their items, not the run', async () => {
		target.route('/hostile');
		target.script(
			'/hostile',
			{ status: 429, retryAfter: '99999999999999999999' },
			{ status: 422, body: { message: 'bad\u0000byte' } },
		);
		const outcomes = await run('/hostile', context({ concurrency: 1 }), [
			write('hostile-1', { n: 1 }, 0),
			write('hostile-2', { n: 2 }, 1),
			write('hostile-3', { n: 3 }, 2),
		]);
		expect(outcomes[0].failure).toMatchObject({ class: 'rate_limited', retryAt: expect.any(Date) });
		expect(Number.isNaN(outcomes[0].failure!.retryAt!.getTime())).toBe(false);
		expect(outcomes[1].failure).toMatchObject({ class: 'permanent', message: 'bad\uFFFDbyte' });
		expect(outcomes[2].ok).toBe(true);
		expect((await keyRow('hostile-1')).status).toBe('failed');
		expect((await keyRow('hostile-2')).status).toBe('failed');
		expect((await keyRow('hostile-3')).status).toBe('succeeded');
		const parked = await getDeadLetters(store, [outcomes[1].failure!.deadLetterId!]);
		expect(parked[0].error_message).toBe('bad\uFFFDbyte');
	});

	it('a Retry-After that is neither seconds nor an HTTP date falls back to the backoff and is noted', async () => {
		target.route('/odd-retry');
		target.script(
			'/odd-retry',
			{ status: 503, retryAfter: '-5' },
			{ status: 503, retryAfter: '1.5' },
		);
		const [outcome] = await run('/odd-retry', context(), [write('odd-retry', { n: 1 })]);
		expect(outcome).toMatchObject({ ok: true, attempts: 3 });
		const history = (await keyRow('odd-retry')).history;
		expect(
			history.filter((h) => /Retry-After "(-5|1\.5)" is not a delay/.test(String(h.message))),
		).toHaveLength(2);
	});

	it('a send that throws ends its item as unknown (it may have gone out); the others finish and settle', async () => {
		target.route('/throws');
		const outcomes = await run(
			'/throws',
			context(),
			[write('throws-1', { n: 1 }, 0), write('throws-2', { n: 2 }, 1)],
			{
				send: async (request) => {
					if (request.key === 'throws-1')
						throw new TypeError("Cannot read properties of undefined (reading 'x')");
					return await send('/throws')(request);
				},
			},
		);
		expect(outcomes[0].failure).toMatchObject({ class: 'unknown_outcome' });
		expect(outcomes[1].ok).toBe(true);
		expect((await keyRow('throws-2')).status).toBe('succeeded');
	});

	it('an unexpected error after taking over an unknown record keeps it unknown, though this run sent nothing', async () => {
		// The record's outcome is unknown (an earlier response was lost); this run takes it over to
		// look the effect up and fails before sending anything. The effect may still exist.
		target.route('/takeover-throws');
		const [first] = await run('/takeover-throws', context(), [write('takeover-throws', { n: 1 })]);
		expect(first.ok).toBe(true);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'unknown' WHERE scope = 'proto' AND key = $1`,
			['takeover-throws'],
		);
		const [outcome] = await run(
			'/takeover-throws',
			context({ onUnknown: 'lookup', inFlightGraceMs: 20 }),
			[write('takeover-throws', { n: 1 })],
			{
				lookup: lookupAt('/takeover-throws'),
				sleep: async () => {
					throw new TypeError("Cannot read properties of undefined (reading 'ms')");
				},
			},
		);
		expect(outcome.ok).toBe(false);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome' });
		expect((await keyRow('takeover-throws')).status).toBe('unknown');
		expect(target.requestsTo('/takeover-throws')).toHaveLength(1);
	});
});

describe('the store under a long write', () => {
	it('the idle sweeper never closes a pool while a write is in flight', async () => {
		target.route('/long');
		const shared = getStore(storeConfig(schema));
		const hold = gated(send('/long'));
		const pending = run('/long', context(), [write('long', { n: 1 })], { send: hold.send }, shared);
		await hold.waiting;
		sweepIdleStores(Date.now() + 60 * 60_000);
		hold.open();
		const [outcome] = await pending;
		expect(outcome.ok).toBe(true);
		expect((await keyRow('long')).status).toBe('succeeded');
		await shared.close();
	});
});

describe('saved responses', () => {
	it('a replay of a body saved over the limit says it is truncated', async () => {
		target.route('/big');
		const big = { text: 'x'.repeat(5_000) };
		const ctx = context({ maxSavedBodyChars: 1_000 });
		const [live] = await run('/big', ctx, [write('big', big)]);
		expect(live.answer!.truncated).toBeUndefined();
		const [replay] = await run('/big', context({ maxSavedBodyChars: 1_000 }), [write('big', big)]);
		expect(replay).toMatchObject({ ok: true, replayed: true, answer: { truncated: true } });
		expect(String(replay.answer!.body)).toHaveLength(1_000);
	});
});
