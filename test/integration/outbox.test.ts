import { randomBytes } from 'node:crypto';
import {
	completeMessages,
	type DeadLetterTarget,
	DEFAULT_FAIL_POLICY,
	failMessages,
	type FailPolicy,
	MessageConflictError,
	type OutboxMessage,
	type OutboxMessageInput,
	outboxStoreConfig,
	type OutboxWriteItem,
	purgeMessages,
	StatementFailedError,
	takeMessages,
	writeWithMessages,
} from '../../lib/outbox';
import { Store } from '../../lib/store';
import { pgSettingsFromEnv } from '../../dev/harness/postgres';
import { adminQuery, storeConfig, testStore } from '../helpers/store';
import { sleep } from '../helpers/sleep';

const { store, schema, cleanup } = testStore('outbox');
afterAll(cleanup);

const orders = `"${schema}".orders`;
beforeAll(async () => {
	await store.ready();
	await adminQuery(`CREATE TABLE ${orders} (id text PRIMARY KEY, amount integer NOT NULL)`);
});

const context = { workflowId: 'wf-outbox', executionId: 'exec-write', node: 'Outbox' };

const message = (key: string, overrides: Partial<OutboxMessageInput> = {}): OutboxMessageInput => ({
	destination: 'crm',
	method: 'POST',
	url: 'http://127.0.0.1:9/orders',
	headers: { 'x-source': 'n8n' },
	body: { key },
	idempotencyKey: key,
	...overrides,
});

const insertOrder = (id: string, amount: number) => ({
	text: `INSERT INTO ${orders} (id, amount) VALUES ($1, $2)`,
	values: [id, amount],
});

/** An item that writes one order and announces it. */
const orderItem = (
	index: number,
	id: string,
	extra: Partial<OutboxWriteItem> = {},
): OutboxWriteItem => ({
	index,
	statements: [insertOrder(id, 10 + index)],
	messages: [message(`${id}:created`)],
	...extra,
});

const orderIds = async (prefix: string) =>
	(
		await adminQuery<{ id: string }>(`SELECT id FROM ${orders} WHERE id LIKE $1 ORDER BY id`, [
			`${prefix}%`,
		])
	).map((r) => r.id);

const messageRows = async (keyPrefix: string) =>
	await adminQuery<{
		id: string;
		idempotency_key: string;
		status: string;
		generation: number;
		attempts: number;
		taken_by: string | null;
		superseded_count: number;
		dead_letter_id: string | null;
		available_at: Date;
	}>(
		`SELECT id::text, idempotency_key, status, generation, attempts, taken_by, superseded_count,
		        dead_letter_id, available_at
		 FROM "${schema}".outbox_messages WHERE idempotency_key LIKE $1 ORDER BY id`,
		[`${keyPrefix}%`],
	);

let taker = 0;
const take = (target: Store, limit: number, leaseSeconds = 60, destination?: string) =>
	takeMessages(target, { limit, leaseSeconds, takenBy: `exec-take-${++taker}`, destination });

/** Takes every takeable message whose key starts with the prefix (other tests' messages stay). */
const settleOthers = async (prefix: string) =>
	await adminQuery(
		`UPDATE "${schema}".outbox_messages SET status = 'done' WHERE idempotency_key NOT LIKE $1 AND status IN ('pending', 'in_flight')`,
		[`${prefix}%`],
	);

const deadLetters = (overrides: Partial<DeadLetterTarget> = {}): DeadLetterTarget => ({
	store,
	workflowId: 'wf-relay',
	workflowName: 'Outbox relay',
	executionId: 'exec-relay',
	step: 'Send Message',
	...overrides,
});

const fastPolicy: FailPolicy = { ...DEFAULT_FAIL_POLICY, baseDelayMs: 0, maxDelayMs: 0 };

describe('Write', () => {
	it('business rows and their messages commit together; a failing statement leaves neither, and the other items commit', async () => {
		const results = await writeWithMessages(
			store,
			[
				orderItem(0, 'w1-a'),
				{
					index: 1,
					statements: [
						insertOrder('w1-b', 11),
						// Fails: w1-a exists. The first statement of this item must go with it.
						insertOrder('w1-a', 99),
					],
					messages: [message('w1-b:created')],
				},
				orderItem(2, 'w1-c', {
					messages: [message('w1-c:created'), message('w1-c:invoiced', { destination: 'erp' })],
				}),
			],
			context,
			{ continueOnFail: true },
		);

		expect(results.map((r) => r.ok)).toEqual([true, false, true]);
		const failed = results[1] as unknown as { ok: false; error: StatementFailedError };
		expect(failed.error).toBeInstanceOf(StatementFailedError);
		expect(failed.error.itemIndex).toBe(1);
		expect(failed.error.sqlState).toBe('23505');
		expect(failed.error.message).toMatch(/^Item 1: statement 2 failed: duplicate key/);

		expect(await orderIds('w1-')).toEqual(['w1-a', 'w1-c']);
		const rows = await messageRows('w1-');
		expect(rows.map((r) => [r.idempotency_key, r.status, r.generation])).toEqual([
			['w1-a:created', 'pending', 0],
			['w1-c:created', 'pending', 0],
			['w1-c:invoiced', 'pending', 0],
		]);
		const ok = results[2] as Extract<(typeof results)[number], { messages: unknown }>;
		expect(ok.messages.map((m) => [m.id, m.enqueued])).toEqual([
			[rows[1].id, true],
			[rows[2].id, true],
		]);
	});

	it('without continue-on-fail, one failing item rolls back the whole run and names its index', async () => {
		const run = writeWithMessages(
			store,
			[
				orderItem(0, 'w2-a'),
				orderItem(1, 'w2-b', {
					statements: [
						{ text: `INSERT INTO ${orders} (id, amount) VALUES ($1, $2)`, values: ['w2-b', null] },
					],
				}),
				orderItem(2, 'w2-c'),
			],
			context,
			{ continueOnFail: false },
		);
		await expect(run).rejects.toBeInstanceOf(StatementFailedError);
		await expect(run).rejects.toMatchObject({ itemIndex: 1, sqlState: '23502' });
		expect(await orderIds('w2-')).toEqual([]);
		expect(await messageRows('w2-')).toEqual([]);
	});

	it('the same key written again with the same content adds nothing; with other content it fails the item and rolls back its rows', async () => {
		const first = await writeWithMessages(store, [orderItem(0, 'w3-a')], context, {
			continueOnFail: true,
		});
		const again = await writeWithMessages(
			store,
			[
				{ index: 0, statements: [], messages: [message('w3-a:created')] },
				{
					index: 1,
					statements: [insertOrder('w3-b', 1)],
					messages: [message('w3-a:created', { body: { changed: true } })],
				},
			],
			context,
			{ continueOnFail: true },
		);
		expect(again[0]).toMatchObject({ ok: true });
		const repeated = again[0] as Extract<(typeof again)[number], { messages: unknown }>;
		const original = first[0] as Extract<(typeof first)[number], { messages: unknown }>;
		expect(repeated.messages).toEqual([{ ...original.messages[0], enqueued: false }]);
		expect(again[1]).toMatchObject({ ok: false });
		expect((again[1] as { error: Error }).error).toBeInstanceOf(MessageConflictError);
		expect(await orderIds('w3-')).toEqual(['w3-a']);
		expect(await messageRows('w3-')).toHaveLength(1);
	});

	it('statements that control the transaction themselves are refused', async () => {
		const results = await writeWithMessages(
			store,
			[
				{
					index: 0,
					statements: [{ text: `INSERT INTO ${orders} VALUES ('w4-a', 1); COMMIT`, values: [] }],
					messages: [message('w4-a:created')],
				},
			],
			context,
			{ continueOnFail: true },
		);
		expect(results[0]).toMatchObject({ ok: false });
		expect(await orderIds('w4-')).toEqual([]);
		expect(await messageRows('w4-')).toEqual([]);
	});

	it('writers of one ordering key are serialised, so ids follow commit order and the later message is never taken first', async () => {
		await settleOthers('w5-');
		const key = { orderingKey: 'customer-7' };
		// A: announces first, then spends a while on a later item before it commits.
		const slow = writeWithMessages(
			store,
			[
				{ index: 0, statements: [], messages: [message('w5-first', key)] },
				{ index: 1, statements: [{ text: 'SELECT pg_sleep(0.8)', values: [] }], messages: [] },
			],
			context,
			{ continueOnFail: false },
		);
		await sleep(200);
		// B: writes the same key's next message while A is still open.
		const fast = writeWithMessages(
			store,
			[{ index: 0, statements: [], messages: [message('w5-second', key)] }],
			context,
			{ continueOnFail: false },
		);
		const order: string[] = [];
		void slow.then(() => order.push('first committed'));
		await fast.then(() => order.push('second committed'));
		await slow;
		expect(order).toEqual(['first committed', 'second committed']);

		const taken = await take(store, 10);
		expect(taken.map((m) => m.idempotencyKey)).toEqual(['w5-first']);
		await completeMessages(store, [{ index: 0, id: taken[0].id, generation: 1 }]);
		expect((await take(store, 10)).map((m) => m.idempotencyKey)).toEqual(['w5-second']);
	});
});

describe('Take', () => {
	beforeAll(async () => {
		await settleOthers('t-');
	});

	it('two takers at once never get the same message', async () => {
		await writeWithMessages(
			store,
			Array.from({ length: 60 }, (_, i) => ({
				index: i,
				statements: [],
				messages: [message(`t1-${String(i).padStart(2, '0')}`)],
			})),
			context,
			{ continueOnFail: false },
		);
		// Four pools, as four relays on queue-mode workers would have.
		const relays = Array.from({ length: 4 }, () => new Store(storeConfig(schema)));
		const got: OutboxMessage[][] = [[], [], [], []];
		try {
			// Each pool connected first, and the first takes sent together: one relay must not drain
			// the outbox while the others are still connecting.
			await Promise.all(relays.map((relay) => relay.ready()));
			const firsts = await Promise.all(relays.map((relay) => take(relay, 7)));
			await Promise.all(
				relays.map(async (relay, r) => {
					got[r].push(...firsts[r]);
					for (;;) {
						const batch = await take(relay, 7);
						if (batch.length === 0) return;
						got[r].push(...batch);
					}
				}),
			);
		} finally {
			await Promise.all(relays.map((relay) => relay.close()));
		}
		const ids = got.flat().map((m) => m.id);
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids).toHaveLength(60);
		expect(got.filter((batch) => batch.length > 0).length).toBeGreaterThan(1);
		const rows = await messageRows('t1-');
		expect(rows.every((r) => r.status === 'in_flight' && r.generation === 1)).toBe(true);
		await completeMessages(
			store,
			got.flat().map((m, index) => ({ index, id: m.id, generation: m.generation })),
		);
	});

	it('an expired lease is taken over with a new generation; the old owner is refused as superseded', async () => {
		await writeWithMessages(
			store,
			[{ index: 0, statements: [], messages: [message('t2-a')] }],
			context,
			{ continueOnFail: false },
		);
		const [first] = await takeMessages(store, { limit: 5, leaseSeconds: 1, takenBy: 'exec-A' });
		expect(first).toMatchObject({
			idempotencyKey: 't2-a',
			generation: 1,
			attempt: 1,
			takenBy: 'exec-A',
		});
		expect(await takeMessages(store, { limit: 5, leaseSeconds: 60, takenBy: 'exec-B' })).toEqual(
			[],
		);

		await sleep(1_200);
		const [second] = await takeMessages(store, { limit: 5, leaseSeconds: 60, takenBy: 'exec-B' });
		expect(second).toMatchObject({ id: first.id, generation: 2, attempt: 2, takenBy: 'exec-B' });

		const [late] = await completeMessages(store, [{ index: 0, id: first.id, generation: 1 }]);
		expect(late).toMatchObject({
			outcome: 'superseded',
			status: 'in_flight',
			currentGeneration: 2,
			takenBy: 'exec-B',
		});
		const [lateFail] = await failMessages(
			store,
			[{ index: 0, id: first.id, generation: 1, errorClass: 'permanent', message: 'late' }],
			deadLetters(),
		);
		expect(lateFail.outcome).toBe('superseded');

		const [owner] = await completeMessages(store, [{ index: 0, id: first.id, generation: 2 }]);
		expect(owner).toMatchObject({ outcome: 'completed', status: 'done' });
		const [repeat] = await completeMessages(store, [{ index: 0, id: first.id, generation: 2 }]);
		expect(repeat).toMatchObject({ outcome: 'already_settled', status: 'done' });

		const [row] = await messageRows('t2-');
		expect(row).toMatchObject({
			status: 'done',
			generation: 2,
			taken_by: 'exec-B',
			superseded_count: 2,
			dead_letter_id: null,
		});
		expect(
			await adminQuery(`SELECT 1 FROM "${schema}".dead_letters WHERE idempotency_key = 't2-a'`),
		).toEqual([]);
	});

	it('order per ordering key holds with three relays at once, through failures and retries', async () => {
		const keys = ['k1', 'k2', 'k3', 'k4'];
		const perKey = 6;
		const written: string[] = [];
		const items: OutboxWriteItem[] = [];
		for (let seq = 0; seq < perKey; seq++)
			for (const key of keys) {
				const idempotencyKey = `t3-${key}-${seq}`;
				written.push(idempotencyKey);
				items.push({
					index: items.length,
					statements: [],
					messages: [message(idempotencyKey, { orderingKey: key, body: { key, seq } })],
				});
			}
		// Unordered messages flow around them.
		for (let i = 0; i < 8; i++)
			items.push({ index: items.length, statements: [], messages: [message(`t3-free-${i}`)] });
		await writeWithMessages(store, items, context, { continueOnFail: false });

		const delivered: string[] = [];
		const sending = new Map<string, string>();
		const overlaps: string[] = [];
		let random = 7;
		const flaky = () => {
			random = (random * 48271) % 2147483647;
			return random % 5 === 0;
		};
		const relays = Array.from({ length: 3 }, () => new Store(storeConfig(schema)));
		try {
			await Promise.all(
				relays.map(async (relay, r) => {
					let idle = 0;
					while (idle < 20) {
						const batch = await takeMessages(relay, {
							limit: 3,
							leaseSeconds: 60,
							takenBy: `relay-${r}`,
						});
						if (batch.length === 0) {
							idle++;
							await sleep(20);
							continue;
						}
						idle = 0;
						for (const m of batch) {
							if (m.orderingKey) {
								if (sending.has(m.orderingKey))
									overlaps.push(`${m.idempotencyKey} while ${sending.get(m.orderingKey)}`);
								sending.set(m.orderingKey, m.idempotencyKey);
							}
							await sleep(2 + (Number(m.id) % 5));
							if (m.orderingKey) sending.delete(m.orderingKey);
							if (flaky()) {
								await failMessages(
									relay,
									[{ index: 0, id: m.id, generation: m.generation, errorClass: 'transient' }],
									deadLetters({ store: relay }),
									{ ...fastPolicy, maxAttempts: 50 },
								);
							} else {
								delivered.push(m.idempotencyKey);
								await completeMessages(relay, [{ index: 0, id: m.id, generation: m.generation }]);
							}
						}
					}
				}),
			);
		} finally {
			await Promise.all(relays.map((relay) => relay.close()));
		}
		expect(overlaps).toEqual([]);
		expect([...delivered].sort()).toEqual(
			[...written, ...Array.from({ length: 8 }, (_, i) => `t3-free-${i}`)].sort(),
		);
		for (const key of keys)
			expect(delivered.filter((k) => k.startsWith(`t3-${key}-`))).toEqual(
				written.filter((k) => k.startsWith(`t3-${key}-`)),
			);
		const rows = await messageRows('t3-');
		expect(rows.every((r) => r.status === 'done')).toBe(true);
	});
});

describe('Fail', () => {
	beforeAll(async () => {
		await settleOthers('f-');
	});

	it('a transient failure schedules a retry, not before the Retry-After; past the cap the message is parked with itself as payload', async () => {
		await writeWithMessages(
			store,
			[
				{
					index: 0,
					statements: [],
					messages: [
						message('f1-a', {
							url: 'http://127.0.0.1:9/invoices',
							headers: { authorization: 'Bearer s3cret', 'x-source': 'n8n' },
							body: { invoice: 'INV-1', amount: 120 },
						}),
					],
				},
			],
			context,
			{ continueOnFail: false },
		);
		const policy: FailPolicy = { ...fastPolicy, maxAttempts: 3 };
		const retryAt = new Date(Date.now() + 60_000);

		const [m1] = await take(store, 5);
		const [later] = await failMessages(
			store,
			[
				{
					index: 0,
					id: m1.id,
					generation: m1.generation,
					errorClass: 'rate_limited',
					status: 429,
					retryAt,
				},
			],
			deadLetters(),
			policy,
		);
		expect(later).toMatchObject({ outcome: 'retry_scheduled', status: 'pending', attempt: 1 });
		expect(later.availableAt!.getTime()).toBeGreaterThanOrEqual(retryAt.getTime() - 5);
		expect(await take(store, 5)).toEqual([]);

		await adminQuery(
			`UPDATE "${schema}".outbox_messages SET available_at = now() WHERE idempotency_key = 'f1-a'`,
		);
		const [m2] = await take(store, 5);
		expect(m2).toMatchObject({ generation: 2, attempt: 2 });
		const [again] = await failMessages(
			store,
			[
				{
					index: 0,
					id: m2.id,
					generation: 2,
					errorClass: 'exhausted',
					status: 503,
					message: 'HTTP 503',
				},
			],
			deadLetters(),
			policy,
		);
		expect(again.outcome).toBe('retry_scheduled');

		const [m3] = await take(store, 5);
		expect(m3.attempt).toBe(3);
		const [dead] = await failMessages(
			store,
			[
				{
					index: 4,
					id: m3.id,
					generation: 3,
					errorClass: 'exhausted',
					status: 503,
					message: 'HTTP 503',
				},
			],
			deadLetters(),
			policy,
		);
		expect(dead).toMatchObject({ outcome: 'dead', status: 'dead', deadLetterClass: 'exhausted' });
		expect(dead.deadLetterId).toMatch(/^\d+$/);

		const [row] = await messageRows('f1-');
		expect(row).toMatchObject({ status: 'dead', dead_letter_id: dead.deadLetterId, attempts: 3 });
		const [letter] = await adminQuery<Record<string, unknown>>(
			`SELECT * FROM "${schema}".dead_letters WHERE id = $1`,
			[dead.deadLetterId],
		);
		expect(letter).toMatchObject({
			idempotency_key: 'f1-a',
			error_class: 'exhausted',
			error_status: 503,
			attempts: 3,
			integration: 'crm',
			step: 'Send Message (crm)',
			status: 'new',
			workflow_id: 'wf-relay',
		});
		expect(letter.error_message).toMatch(/Gave up after 3 attempts; last: HTTP 503/);
		expect(letter.payload).toMatchObject({
			outboxMessageId: m1.id,
			destination: 'crm',
			method: 'POST',
			url: 'http://127.0.0.1:9/invoices',
			body: { invoice: 'INV-1', amount: 120 },
			idempotencyKey: 'f1-a',
			headers: { 'x-source': 'n8n' },
		});
		// The payload is masked like every dead letter: no secret lands in the store.
		expect(JSON.stringify(letter.payload)).not.toContain('s3cret');
		expect(await take(store, 5)).toEqual([]);
	});

	it('a permanent failure parks at once; nothing retries', async () => {
		await writeWithMessages(
			store,
			[{ index: 0, statements: [], messages: [message('f2-a')] }],
			context,
			{ continueOnFail: false },
		);
		const [m] = await take(store, 5);
		const [dead] = await failMessages(
			store,
			[
				{
					index: 0,
					id: m.id,
					generation: 1,
					errorClass: 'permanent',
					status: 422,
					message: 'phone invalid',
				},
			],
			deadLetters(),
		);
		expect(dead).toMatchObject({ outcome: 'dead', deadLetterClass: 'permanent', attempt: 1 });
		const [letter] = await adminQuery<{ error_class: string; error_message: string }>(
			`SELECT error_class, error_message FROM "${schema}".dead_letters WHERE id = $1`,
			[dead.deadLetterId],
		);
		expect(letter).toEqual({ error_class: 'permanent', error_message: 'phone invalid' });
	});

	it('a paused destination holds the message without using up its attempts', async () => {
		await writeWithMessages(
			store,
			[{ index: 0, statements: [], messages: [message('f3-a')] }],
			context,
			{ continueOnFail: false },
		);
		const policy: FailPolicy = { ...DEFAULT_FAIL_POLICY, maxAttempts: 1 };
		for (let round = 1; round <= 3; round++) {
			const [m] = await take(store, 5);
			expect(m).toMatchObject({ idempotencyKey: 'f3-a', generation: round, attempt: 1 });
			const [held] = await failMessages(
				store,
				[{ index: 0, id: m.id, generation: round, errorClass: 'paused', message: 'crm paused' }],
				deadLetters(),
				policy,
			);
			expect(held).toMatchObject({ outcome: 'held', status: 'pending', attempt: 0 });
			expect(held.availableAt!.getTime()).toBeGreaterThan(Date.now() + 50_000);
			await adminQuery(
				`UPDATE "${schema}".outbox_messages SET available_at = now() WHERE idempotency_key = 'f3-a'`,
			);
		}
		// Back from the pause, a real failure counts: with a cap of 1 it is the last attempt.
		const [m] = await take(store, 5);
		const [dead] = await failMessages(
			store,
			[{ index: 0, id: m.id, generation: 4, errorClass: 'transient', message: 'HTTP 502' }],
			deadLetters(),
			policy,
		);
		expect(dead).toMatchObject({ outcome: 'dead', deadLetterClass: 'exhausted', attempt: 1 });
	});

	it('messages not in the outbox are reported, not dropped', async () => {
		const results = await completeMessages(store, [
			{ index: 0, id: '999999999', generation: 1 },
			{ index: 1, id: 'not-an-id', generation: 1 },
		]);
		expect(results.map((r) => [r.index, r.outcome])).toEqual([
			[0, 'not_found'],
			[1, 'not_found'],
		]);
	});
});

describe('an outbox in the business database, named by a Postgres credential', () => {
	const database = `t_outbox_business_${randomBytes(4).toString('hex')}`;
	let business: Store;

	beforeAll(async () => {
		await adminQuery(`CREATE DATABASE ${database}`);
		const settings = pgSettingsFromEnv();
		business = new Store(
			outboxStoreConfig(
				{ ...settings, database, ssl: 'disable', maxConnections: 100 },
				'app_outbox',
			),
		);
		await business.ready();
		await business.query(`CREATE TABLE public.invoices (id text PRIMARY KEY)`);
	});

	afterAll(async () => {
		await business?.close();
		await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
	});

	it('is created there on first use; rows and messages commit there together; a dead letter goes to the store', async () => {
		const [row] = await business.query<{ n: number }>(
			`SELECT count(*)::int AS n FROM app_outbox.migrations`,
		);
		expect(row.n).toBeGreaterThanOrEqual(6);

		const results = await writeWithMessages(
			business,
			[
				{
					index: 0,
					statements: [{ text: 'INSERT INTO public.invoices (id) VALUES ($1)', values: ['INV-9'] }],
					messages: [message('b1-inv-9')],
				},
				{
					index: 1,
					statements: [{ text: 'INSERT INTO public.invoices (id) VALUES ($1)', values: ['INV-9'] }],
					messages: [message('b1-inv-9-again')],
				},
			],
			context,
			{ continueOnFail: true },
		);
		expect(results.map((r) => r.ok)).toEqual([true, false]);
		const messages = await business.query<{ idempotency_key: string }>(
			`SELECT idempotency_key FROM app_outbox.outbox_messages`,
		);
		expect(messages).toEqual([{ idempotency_key: 'b1-inv-9' }]);

		const [m] = await takeMessages(business, { limit: 5, leaseSeconds: 60, takenBy: 'exec-b' });
		const [dead] = await failMessages(
			business,
			[{ index: 0, id: m.id, generation: 1, errorClass: 'conflict', message: 'key reused' }],
			deadLetters(),
		);
		expect(dead.outcome).toBe('dead');
		const [letter] = await adminQuery<{ idempotency_key: string; error_class: string }>(
			`SELECT idempotency_key, error_class FROM "${schema}".dead_letters WHERE id = $1`,
			[dead.deadLetterId],
		);
		expect(letter).toEqual({ idempotency_key: 'b1-inv-9', error_class: 'conflict' });
		const [state] = await business.query<{ status: string; dead_letter_id: string }>(
			`SELECT status, dead_letter_id FROM app_outbox.outbox_messages WHERE id = $1`,
			[m.id],
		);
		expect(state).toEqual({ status: 'dead', dead_letter_id: dead.deadLetterId });
	});
});

describe('Purge', () => {
	it('removes settled messages past the retention, never open ones', async () => {
		await writeWithMessages(
			store,
			[{ index: 0, statements: [], messages: [message('p1-open'), message('p1-done')] }],
			context,
			{ continueOnFail: false },
		);
		await adminQuery(
			`UPDATE "${schema}".outbox_messages SET status = 'done', completed_at = now() - interval '10 days' WHERE idempotency_key = 'p1-done'`,
		);
		await adminQuery(
			`UPDATE "${schema}".outbox_messages SET created_at = now() - interval '10 days' WHERE idempotency_key = 'p1-open'`,
		);
		expect(await purgeMessages(store, 7)).toBeGreaterThanOrEqual(1);
		expect((await messageRows('p1-')).map((r) => r.idempotency_key)).toEqual(['p1-open']);
	});
});
