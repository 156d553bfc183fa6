import { closeSucceededDeadLetters, getDeadLetters } from '../../lib/deadletter';
import {
	DEFAULT_POLICY,
	requestFingerprint,
	runWrites,
	type WriteContext,
	type WriteRequest,
} from '../../lib/idempotency';
import { Store } from '../../lib/store';
import { fileTarget } from '../helpers/target';
import { fetchSender } from '../helpers/send';
import { writeContexts } from '../helpers/writeContext';
import { adminClient, adminQuery, storeConfig, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';
import { sleep } from '../helpers/sleep';

const { store, schema, cleanup } = testStore('idem');
const target = fileTarget();
afterAll(cleanup);

const context = writeContexts({
	workflowId: 'wf-leads',
	node: 'Create Contact',
	integration: undefined,
	policy: { ...DEFAULT_POLICY, baseDelayMs: 50, maxDelayMs: 200, deadlineMs: 10_000 },
});
const write = (key: string, body: unknown, index = 0): WriteRequest & { body: unknown } => ({
	...writeRequest({ index, scope: 'crm', key, url: '/contacts', body }),
	body,
});
const bodies = new Map<string, unknown>();
const run = (
	route: string,
	ctx: WriteContext,
	requests: Array<WriteRequest & { body: unknown }>,
	s: Store = store,
) => {
	for (const r of requests) bodies.set(`${r.key}#${r.index}`, r.body);
	return runWrites(s, ctx, requests, {
		send: fetchSender(target.url(route), (r) => bodies.get(`${r.key}#${r.index}`)),
	});
};

describe('the record state machine on real Postgres', () => {
	it('a lost response after commit is retried with the same key and leaves exactly one effect', async () => {
		target.route('/lost', { honoursKey: true });
		target.script('/lost', { reset: 'after' });
		const [outcome] = await run('/lost', context(), [write('lead-1', { name: 'Ana' })]);
		expect(outcome).toMatchObject({ ok: true, attempts: 2, replayed: false });
		expect(target.effectsOf('/lost')).toHaveLength(1);
		expect(target.requestsTo('/lost').map((r) => r.key)).toEqual(['lead-1', 'lead-1']);
	});

	it('20 executions on one key at once send one request and all get the same saved result', async () => {
		target.route('/race', { honoursKey: false, latencyMs: 300 });
		const workers = Array.from({ length: 20 }, () => new Store(storeConfig(schema)));
		try {
			const outcomes = await Promise.all(
				workers.map((w) => run('/race', context(), [write('lead-race', { name: 'Bo' })], w)),
			);
			expect(target.requestsTo('/race')).toHaveLength(1);
			expect(target.effectsOf('/race')).toHaveLength(1);
			const answers = outcomes.map(([o]) => JSON.stringify(o.answer?.body));
			expect(new Set(answers).size).toBe(1);
			expect(outcomes.every(([o]) => o.ok)).toBe(true);
			expect(outcomes.filter(([o]) => o.replayed)).toHaveLength(19);
		} finally {
			await Promise.all(workers.map((w) => w.close()));
		}
	});

	it('503 three times then 201 succeeds with attempts 4', async () => {
		target.route('/flaky');
		target.script('/flaky', { status: 503 }, { status: 503 }, { status: 503 });
		const [outcome] = await run('/flaky', context(), [write('lead-flaky', { name: 'Cy' })]);
		expect(outcome).toMatchObject({ ok: true, attempts: 4 });
		expect(target.effectsOf('/flaky')).toHaveLength(1);
	});

	it('429 with Retry-After: 2 waits at least 2 s', async () => {
		target.route('/limited');
		target.script('/limited', { status: 429, retryAfter: '2' });
		const started = Date.now();
		const [outcome] = await run('/limited', context(), [write('lead-429', { name: 'Di' })]);
		expect(outcome.ok).toBe(true);
		const [first, second] = target.requestsTo('/limited');
		expect(second.at - first.at).toBeGreaterThanOrEqual(2_000);
		expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
	});

	it('a Retry-After beyond the deadline parks the item as rate limited at once', async () => {
		target.route('/limited-long');
		target.script('/limited-long', { status: 429, retryAfter: '3600' });
		const started = Date.now();
		const [outcome] = await run('/limited-long', context(), [
			write('lead-429-long', { name: 'Ed' }),
		]);
		expect(Date.now() - started).toBeLessThan(2_000);
		expect(outcome.failure).toMatchObject({
			class: 'rate_limited',
			status: 429,
			retryAt: expect.any(Date),
		});
		const [record] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(record).toMatchObject({ error_class: 'rate_limited', idempotency_key: 'lead-429-long' });
		expect(record.retry_after).toEqual(outcome.failure!.retryAt);
	});

	it('422 is not retried, fails with the target message and is parked', async () => {
		target.route('/strict');
		target.script('/strict', { status: 422, body: { message: 'phone: invalid format' } });
		const [outcome] = await run('/strict', context(), [write('lead-422', { phone: '0151' })]);
		expect(outcome).toMatchObject({
			ok: false,
			attempts: 1,
			failure: { class: 'permanent', status: 422, message: 'phone: invalid format' },
		});
		expect(target.requestsTo('/strict')).toHaveLength(1);
		const [record] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(record).toMatchObject({
			error_class: 'permanent',
			error_message: 'phone: invalid format',
			payload: { phone: '0151' },
		});
	});

	it('the same key with a different body after a 422 is sent (fix and replay)', async () => {
		const [fixed] = await run('/strict', context(), [write('lead-422', { phone: '+49151' })]);
		expect(fixed.ok).toBe(true);
		expect(target.effectsOf('/strict')).toHaveLength(1);
		expect(target.effectsOf('/strict')[0].body).toEqual({ phone: '+49151' });
	});

	it('the same key with a different body after a success is a conflict and sends nothing', async () => {
		const before = target.requestsTo('/strict').length;
		const [outcome] = await run('/strict', context(), [write('lead-422', { phone: '+49999' })]);
		expect(outcome.failure).toMatchObject({ class: 'conflict' });
		expect(target.requestsTo('/strict')).toHaveLength(before);
	});

	it('a replay of a succeeded key returns the saved response without a call', async () => {
		const before = target.requestsTo('/strict').length;
		const [outcome] = await run('/strict', context(), [write('lead-422', { phone: '+49151' })]);
		expect(outcome).toMatchObject({
			ok: true,
			replayed: true,
			answer: { status: 201, body: { phone: '+49151' } },
		});
		expect(target.requestsTo('/strict')).toHaveLength(before);
	});

	it('an expired lease after a simulated crash is reconciled by the configured strategy', async () => {
		target.route('/crash', { honoursKey: true });
		// A worker claimed the key, started an attempt (counted), sent, and died before recording the answer.
		const crashed = context({ onUnknown: 'retry' });
		await adminQuery(
			`INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, execution_id, expires_at, attempts) VALUES ('crm', 'lead-crash', $1, 'in_progress', now() - interval '1 second', 'dead-worker', now() + interval '1 day', 1)`,
			[requestFingerprint({ method: 'POST', url: '/contacts', body: { name: 'Fa' } })],
		);
		await fetch(target.url('/crash'), {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'idempotency-key': 'lead-crash' },
			body: JSON.stringify({ name: 'Fa' }),
		});
		const [retried] = await run('/crash', crashed, [write('lead-crash', { name: 'Fa' })]);
		expect(retried.ok).toBe(true);
		expect(target.effectsOf('/crash')).toHaveLength(1);

		// Park for review: nothing is sent.
		await adminQuery(
			`INSERT INTO "${schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, execution_id, expires_at, attempts) VALUES ('crm', 'lead-crash-2', $1, 'in_progress', now() - interval '1 second', 'dead-worker', now() + interval '1 day', 1)`,
			[requestFingerprint({ method: 'POST', url: '/contacts', body: { name: 'Gi' } })],
		);
		const before = target.requestsTo('/crash').length;
		const [parked] = await run('/crash', context({ onUnknown: 'park' }), [
			write('lead-crash-2', { name: 'Gi' }),
		]);
		expect(parked.failure).toMatchObject({ class: 'unknown_outcome' });
		expect(target.requestsTo('/crash')).toHaveLength(before);
	});

	it('a reached deadline parks the item as exhausted', async () => {
		target.route('/down');
		target.script('/down', ...Array.from({ length: 20 }, () => ({ status: 503 })));
		const [outcome] = await run(
			'/down',
			context({
				policy: {
					...DEFAULT_POLICY,
					maxAttempts: 50,
					baseDelayMs: 400,
					maxDelayMs: 400,
					deadlineMs: 1_500,
				},
			}),
			[write('lead-down', { name: 'Hu' })],
		);
		expect(outcome.failure).toMatchObject({ class: 'exhausted', status: 503 });
		expect(outcome.failure!.message).toMatch(/deadline of 2 s reached|gave up/);
		const [record] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(record.error_class).toBe('exhausted');
	});

	it('with Postgres unreachable it fails before sending anything', async () => {
		target.route('/never');
		const unreachable = new Store({ ...storeConfig(schema), port: 1 });
		try {
			await expect(
				run('/never', context(), [write('lead-x', { name: 'Io' })], unreachable),
			).rejects.toThrow(/unreachable/);
		} finally {
			await unreachable.close();
		}
		expect(target.requestsTo('/never')).toHaveLength(0);
	});

	it('claims for a whole run are one statement, and each item keeps its own outcome', async () => {
		target.route('/batch');
		target.script('/batch', { delayMs: 0 });
		const requests = Array.from({ length: 50 }, (_, i) => write(`batch-${i}`, { n: i }, i));
		const outcomes = await run('/batch', context({ concurrency: 10 }), requests);
		expect(outcomes.map((o) => o.index)).toEqual(requests.map((r) => r.index));
		expect(outcomes.every((o) => o.ok && !o.replayed)).toBe(true);
		expect(target.effectsOf('/batch')).toHaveLength(50);
		const rows = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".idempotency_keys WHERE key LIKE 'batch-%' AND status = 'succeeded'`,
		);
		expect(rows[0].n).toBe(50);
	});

	it('one live write to an integration with a healthy breaker costs two statements, a replay of it two', async () => {
		// The single-event path (one item per execution) pays every round trip alone: the claim
		// (which carries the gate: pause, breaker and held items, and starts the first attempt of
		// an item sent at once) and the settle (which also closes the key's open dead letters). A
		// success against a breaker without a streak records nothing.
		target.route('/one');
		const [letter] = await adminQuery<{ id: string }>(
			`INSERT INTO "${schema}".dead_letters (workflow_id, step, item_key, idempotency_key, error_class, payload, expires_at)
			 VALUES ('wf-leads', 'Create Contact', 'one-1', 'one-1', 'transient', '{"n":1}', now() + interval '90 days') RETURNING id`,
		);
		const statements: string[] = [];
		const counted = new Proxy(store, {
			get(target, prop, receiver) {
				const value = Reflect.get(target, prop, receiver);
				if (prop !== 'query' && prop !== 'execute' && prop !== 'transaction') return value;
				return (sql: unknown, ...rest: unknown[]) => {
					statements.push(typeof sql === 'string' ? sql.trim().split('\n')[0] : String(prop));
					return (value as (...a: unknown[]) => unknown).call(target, sql, ...rest);
				};
			},
		});
		const oneContext = () =>
			context({ integration: 'one-api', breaker: { threshold: 3, coolDownSeconds: 60 } });
		const [live] = await run('/one', oneContext(), [write('one-1', { n: 1 })], counted);
		expect(live).toMatchObject({ ok: true, replayed: false, attempts: 1 });
		expect(statements).toHaveLength(2);
		const [closed] = await adminQuery<{ status: string; events: string[] }>(
			`SELECT d.status, array_agg(e.actor || ': ' || e.reason) AS events FROM "${schema}".dead_letters d
			 JOIN "${schema}".dead_letter_events e ON e.dead_letter_id = d.id WHERE d.id = $1 GROUP BY d.status`,
			[letter.id],
		);
		expect(closed).toEqual({
			status: 'replayed',
			events: [expect.stringMatching(/^Idempotent HTTP Write: succeeded on a later delivery/)],
		});
		statements.length = 0;
		const [again] = await run('/one', oneContext(), [write('one-1', { n: 1 })], counted);
		expect(again).toMatchObject({ ok: true, replayed: true });
		expect(statements).toHaveLength(2);
		expect(target.effectsOf('/one')).toHaveLength(1);
	});

	it('the circuit breaker opens after a streak of transient failures and holds the next writes without calling', async () => {
		target.route('/breaker');
		target.script('/breaker', { status: 503 }, { status: 503 }, { status: 503 });
		const breakerContext = () =>
			context({
				integration: 'ledger',
				breaker: { threshold: 3, coolDownSeconds: 60 },
				policy: { ...DEFAULT_POLICY, maxAttempts: 1 },
			});
		const first = await run('/breaker', breakerContext(), [
			write('ledger-1', { n: 1 }, 0),
			write('ledger-2', { n: 2 }, 1),
			write('ledger-3', { n: 3 }, 2),
		]);
		expect(first.map((o) => o.failure?.class)).toEqual(['exhausted', 'exhausted', 'exhausted']);
		const sent = target.requestsTo('/breaker').length;
		const [held] = await run('/breaker', breakerContext(), [write('ledger-4', { n: 4 })]);
		expect(held.failure).toMatchObject({
			class: 'paused',
			message: expect.stringMatching(/circuit breaker for ledger is open until/),
		});
		expect(target.requestsTo('/breaker')).toHaveLength(sent);
		const [record] = await getDeadLetters(store, [held.failure!.deadLetterId!]);
		expect(record.status).toBe('held');
	});
});

describe('a run that stalls past its lease before the request leaves', () => {
	it('sends nothing on the ended lease, asks the fence again, and neither counts an attempt nor feeds the breaker', async () => {
		target.route('/stalled', { honoursKey: true });
		const stalled = new Set<string>();
		const send = fetchSender(target.url('/stalled'), () => ({ n: 1 }));
		const stallingContext = () =>
			context({
				integration: 'stalling',
				breaker: { threshold: 1, coolDownSeconds: 60 },
				policy: { ...DEFAULT_POLICY, maxAttempts: 1 },
			});
		// Each key's first send finds its wire window already over, as after a stall (a long GC
		// pause, a frozen worker) between the fence and the send: the sender refuses it.
		const [outcome] = await runWrites(store, stallingContext(), [write('stall-1', { n: 1 })], {
			send: async (request, attempt, wire) => {
				if (stalled.has(request.key)) return await send(request, attempt, wire);
				stalled.add(request.key);
				return await send(request, attempt, { notAfter: Date.now() - 1 });
			},
		});
		expect(outcome).toMatchObject({ ok: true, attempts: 1 });
		expect(target.effectsOf('/stalled')).toHaveLength(1);
		// The breaker (threshold 1) saw no failure: the next write to the integration is sent.
		const [next] = await run('/stalled', stallingContext(), [write('stall-2', { n: 2 })]);
		expect(next).toMatchObject({ ok: true });
		expect(target.effectsOf('/stalled')).toHaveLength(2);
	});
});

describe('a parked item that later succeeds', () => {
	it('its open record is closed as replayed, with an audit event, and a record someone took is left to them', async () => {
		target.route('/later', { honoursKey: true });
		target.script('/later', { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
		const tight = {
			...DEFAULT_POLICY,
			baseDelayMs: 10,
			maxDelayMs: 20,
			deadlineMs: 10_000,
			maxAttempts: 2,
		};
		const [first, taken] = await run('/later', context({ policy: tight }), [
			write('lead-later', { name: 'Di' }),
			write('lead-taken', { name: 'Ed' }, 1),
		]);
		expect(first.ok).toBe(false);
		expect(taken.ok).toBe(false);
		const byId = async (id: string) => (await getDeadLetters(store, [id]))[0];
		const parked = await byId(first.failure!.deadLetterId!);
		const parkedTaken = await byId(taken.failure!.deadLetterId!);
		expect(parked.status).toBe('new');
		// An operator has taken the second one.
		await adminQuery(`UPDATE "${schema}".dead_letters SET status = 'being_fixed' WHERE id = $1`, [
			parkedTaken.id,
		]);

		const again = await run('/later', context(), [
			write('lead-later', { name: 'Di' }),
			write('lead-taken', { name: 'Ed' }, 1),
		]);
		expect(again.every((o) => o.ok)).toBe(true);
		const closed = await byId(parked.id);
		const left = await byId(parkedTaken.id);
		expect(closed.status).toBe('replayed');
		expect(closed.history.at(-1)).toMatchObject({
			actor: 'Idempotent HTTP Write',
			fromStatus: 'new',
			toStatus: 'replayed',
		});
		expect(closed.history.at(-1)!.reason).toMatch(
			/^succeeded on a later delivery \(execution exec-\d+\)$/,
		);
		expect(left.status).toBe('being_fixed');
		expect(target.effectsOf('/later')).toHaveLength(2);
	});

	it('a conflict stays open when the key succeeds with the other request: a person decides', async () => {
		target.route('/later-conflict', { honoursKey: true });
		// The key is held by a write of one body while a delivery with another body arrives.
		target.script('/later-conflict', { delayMs: 400 });
		const [firstRun, conflicting] = await Promise.all([
			run('/later-conflict', context(), [write('lead-both', { name: 'Fay' })]),
			sleep(100).then(
				async () =>
					await run('/later-conflict', context(), [write('lead-both', { name: 'Fay Smith' })]),
			),
		]);
		expect(firstRun[0].ok).toBe(true);
		expect(conflicting[0].failure?.class).toBe('conflict');
		// The first body is delivered again and answered from the key: a success of the key.
		const [again] = await run('/later-conflict', context(), [write('lead-both', { name: 'Fay' })]);
		expect(again).toMatchObject({ ok: true, replayed: true });
		const [record] = await getDeadLetters(store, [conflicting[0].failure!.deadLetterId!]);
		expect(record).toMatchObject({ status: 'new', error_class: 'conflict' });
		expect(target.effectsOf('/later-conflict')).toHaveLength(1);
	});

	it('a success of a key closes nothing once the key was claimed again by a new operation', async () => {
		// The key succeeded long ago, passed its retention and was claimed again; the new
		// operation failed and parked its item. A run that answered the old success from the record
		// just before the renewal closes its keys' letters only while the record still says succeeded.
		target.route('/renewed', { honoursKey: false });
		const [old] = await run('/renewed', context(), [write('lead-renewed', { name: 'Gus' })]);
		expect(old.ok).toBe(true);
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET expires_at = now() - interval '1 day' WHERE key = $1`,
			['lead-renewed'],
		);
		target.script('/renewed', { status: 422 });
		const [renewed] = await run('/renewed', context(), [write('lead-renewed', { name: 'Gus' })]);
		expect(renewed.failure?.class).toBe('permanent');
		const closed = await closeSucceededDeadLetters(store, {
			workflowId: 'wf-leads',
			step: 'Create Contact',
			keys: [{ scope: 'crm', key: 'lead-renewed' }],
			actor: 'Idempotent HTTP Write',
			reason: 'succeeded on a later delivery (execution of the old operation)',
		});
		expect(closed).toBe(0);
		const [letter] = await getDeadLetters(store, [renewed.failure!.deadLetterId!]);
		expect(letter.status).toBe('new');
		const [record] = await adminQuery<{ status: string; generation: string }>(
			`SELECT status, generation FROM "${schema}".idempotency_keys WHERE key = $1`,
			['lead-renewed'],
		);
		expect(record).toEqual({ status: 'failed', generation: '2' });
		expect(target.effectsOf('/renewed')).toHaveLength(1);
	});

	it('a close racing the renewal that parks into the same open record leaves the record open', async () => {
		// The open record of a key whose record says succeeded (its close not yet run), while a
		// renewed operation claims the key and merges its own failure into that record in one
		// transaction. The close started meanwhile must see the claim, not its older snapshot.
		target.route('/race', { honoursKey: false });
		target.script('/race', { status: 422 });
		const [failed] = await run('/race', context(), [write('lead-race', { name: 'Hal' })]);
		const letterId = failed.failure!.deadLetterId!;
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET status = 'succeeded' WHERE key = $1`,
			['lead-race'],
		);
		const renewal = await adminClient();
		try {
			await renewal.query('BEGIN');
			await renewal.query(
				`UPDATE "${schema}".idempotency_keys SET status = 'in_progress', generation = generation + 1 WHERE key = $1`,
				['lead-race'],
			);
			await renewal.query(
				`UPDATE "${schema}".dead_letters SET failure_count = failure_count + 1 WHERE id = $1`,
				[letterId],
			);
			const close = closeSucceededDeadLetters(store, {
				workflowId: 'wf-leads',
				step: 'Create Contact',
				keys: [{ scope: 'crm', key: 'lead-race' }],
				actor: 'Idempotent HTTP Write',
				reason: 'succeeded on a later delivery (execution of the old operation)',
			});
			await sleep(300);
			await renewal.query('COMMIT');
			expect(await close).toBe(0);
		} finally {
			await renewal.end();
		}
		const [letter] = await getDeadLetters(store, [letterId]);
		expect(letter).toMatchObject({ status: 'new', failure_count: 2 });
	});
});

describe('hostile keys', () => {
	it('an item whose key has an unpaired surrogate is parked, not a failed run (found by the fuzz campaign)', async () => {
		target.route('/surrogate', { honoursKey: true });
		const [outcome] = await run('/surrogate', context(), [write('lead-\ud800', { name: 'Ivo' })]);
		expect(outcome.ok).toBe(false);
		const [record] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(record.idempotency_key).toBe('lead-\ufffd');
		expect(target.effectsOf('/surrogate')).toHaveLength(0);
	});
});

describe('a run whose earlier attempt lost its response', () => {
	it('ends unknown_outcome, not failed, when a later attempt fails: the effect may exist', async () => {
		target.route('/lost-then-down', { honoursKey: true });
		target.script('/lost-then-down', { reset: 'after' }, { status: 503 }, { status: 503 });
		const policy = {
			...DEFAULT_POLICY,
			baseDelayMs: 10,
			maxDelayMs: 20,
			deadlineMs: 10_000,
			maxAttempts: 3,
		};
		const [outcome] = await run(
			'/lost-then-down',
			context({ policy, alreadyHappened: 'enriched, not in CRM' }),
			[write('lead-lost-down', { name: 'Fe' })],
		);
		expect(outcome.ok).toBe(false);
		expect(outcome.failure).toMatchObject({ class: 'unknown_outcome', status: 503 });
		expect(outcome.failure!.message).toMatch(/response was lost after it was sent/);
		// The first attempt did commit at the target.
		expect(target.effectsOf('/lost-then-down')).toHaveLength(1);
		const [record] = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".idempotency_keys WHERE key = 'lead-lost-down'`,
		);
		expect(record.status).not.toBe('failed');
		const [parked] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		expect(parked).toMatchObject({ error_class: 'unknown_outcome' });
		expect(String(parked.already_happened)).toBe(
			'enriched, not in CRM; Create Contact may have taken effect (its response was lost): check before replaying',
		);

		// Delivered again once the lease is over: the same key, still one effect, and the record closes.
		await adminQuery(
			`UPDATE "${schema}".idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = 'lead-lost-down'`,
		);
		const [again] = await run('/lost-then-down', context(), [
			write('lead-lost-down', { name: 'Fe' }),
		]);
		expect(again.ok).toBe(true);
		expect(target.effectsOf('/lost-then-down')).toHaveLength(1);
		expect((await getDeadLetters(store, [parked.id]))[0].status).toBe('replayed');
	});
});
