import { claimEvents, ClaimMode } from '../../lib/dedupe';
import { ConfigurationError, ItemError, StoreUnavailableError } from '../../lib/errors';
import { type OutboxWriteItem, writeWithMessages } from '../../lib/outbox';
import { adminClient, adminQuery, testStore } from '../helpers/store';
import { sleep } from '../helpers/sleep';

/**
 * Dedupe in the same transaction as the work: the event's claim, the business rows and the
 * outbox messages commit together or not at all. Every test ends by reading those three tables.
 */
const { store, schema, cleanup } = testStore('handle_once');
afterAll(cleanup);

const invoices = `"${schema}".invoices`;
beforeAll(async () => {
	await store.ready();
	await adminQuery(`CREATE TABLE ${invoices} (id text PRIMARY KEY, amount integer NOT NULL)`);
});

const consumer = 'billing';
const context = (executionId: string) => ({ workflowId: 'wf-once', executionId, node: 'Outbox' });

/** An item handling event `eventId`: one invoice row and one message announcing it. */
const invoiceItem = (
	index: number,
	eventId: string,
	extra: Partial<OutboxWriteItem> = {},
): OutboxWriteItem => ({
	index,
	event: { consumer, eventId, retentionDays: 30 },
	statements: [
		{ text: `INSERT INTO ${invoices} (id, amount) VALUES ($1, $2)`, values: [eventId, 100] },
	],
	messages: [
		{
			destination: 'crm',
			method: 'POST',
			url: 'http://127.0.0.1:9/invoices',
			headers: {},
			body: { invoice: eventId },
			idempotencyKey: `${eventId}:created`,
		},
	],
	...extra,
});

/** What the destination tables hold for one event: its claim, its rows, its messages. */
async function stateOf(eventId: string) {
	const [event] = await adminQuery<{ status: string; execution_id: string }>(
		`SELECT status, execution_id FROM "${schema}".processed_events WHERE consumer = $1 AND event_id = $2`,
		[consumer, eventId],
	);
	const rows = await adminQuery(`SELECT id FROM ${invoices} WHERE id = $1`, [eventId]);
	const messages = await adminQuery(
		`SELECT id FROM "${schema}".outbox_messages WHERE idempotency_key = $1`,
		[`${eventId}:created`],
	);
	return { event: event ?? null, rows: rows.length, messages: messages.length };
}

describe('Handle Each Event Once: the claim commits with the work', () => {
	it('the first delivery writes rows, messages and the claim; a redelivery writes nothing', async () => {
		const first = await writeWithMessages(store, [invoiceItem(0, 'ev-1')], context('x1'), {
			continueOnFail: false,
		});
		expect(first[0]).toMatchObject({ ok: true, messages: [{ enqueued: true }] });
		const again = await writeWithMessages(
			store,
			[invoiceItem(0, 'ev-1', { statements: [] })],
			context('x2'),
			{ continueOnFail: false },
		);
		expect(again).toEqual([{ index: 0, ok: true, duplicate: true, eventId: 'ev-1' }]);
		expect(await stateOf('ev-1')).toEqual({
			event: { status: 'done', execution_id: 'x1' },
			rows: 1,
			messages: 1,
		});
	});

	it('the same event twice in one run is written once', async () => {
		const results = await writeWithMessages(
			store,
			[invoiceItem(0, 'ev-2'), invoiceItem(1, 'ev-2')],
			context('x3'),
			{ continueOnFail: false },
		);
		expect(results[1]).toEqual({ index: 1, ok: true, duplicate: true, eventId: 'ev-2' });
		expect(await stateOf('ev-2')).toMatchObject({ rows: 1, messages: 1 });
	});

	it('a failing statement leaves the event unclaimed, so the next delivery does the work', async () => {
		const broken = invoiceItem(1, 'ev-3', {
			statements: [
				{ text: `INSERT INTO ${invoices} (id, amount) VALUES ($1, $2)`, values: ['ev-3', null] },
			],
		});
		const results = await writeWithMessages(
			store,
			[invoiceItem(0, 'ev-4'), broken],
			context('x4'),
			{
				continueOnFail: true,
			},
		);
		expect(results[0]).toMatchObject({ ok: true });
		expect(results[1]).toMatchObject({ ok: false, error: { itemIndex: 1 } });
		expect(await stateOf('ev-3')).toEqual({ event: null, rows: 0, messages: 0 });
		expect(await stateOf('ev-4')).toMatchObject({ event: { status: 'done' }, rows: 1 });

		await writeWithMessages(store, [invoiceItem(0, 'ev-3')], context('x5'), {
			continueOnFail: false,
		});
		expect(await stateOf('ev-3')).toEqual({
			event: { status: 'done', execution_id: 'x5' },
			rows: 1,
			messages: 1,
		});
	});

	it('a connection killed after the claim and before commit leaves neither claim nor work', async () => {
		// The item's second statement sleeps after the claim and the invoice row: the backend is
		// terminated there, as a crash of n8n or the database connection would end it.
		const slow = invoiceItem(0, 'ev-5', {
			statements: [
				{ text: `INSERT INTO ${invoices} (id, amount) VALUES ($1, $2)`, values: ['ev-5', 5] },
				{ text: `SELECT pg_sleep(30) AS slept, 'ev-5-marker' AS marker`, values: [] },
			],
		});
		const run = writeWithMessages(store, [slow], context('x6'), { continueOnFail: false }).then(
			() => undefined,
			(error: unknown) => error,
		);
		const admin = await adminClient();
		try {
			let killed = 0;
			for (let i = 0; i < 100 && killed === 0; i++) {
				await sleep(50);
				const result = await admin.query(
					`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%ev-5-marker%' AND pid <> pg_backend_pid()`,
				);
				killed = result.rowCount ?? 0;
			}
			expect(killed).toBe(1);
		} finally {
			await admin.end();
		}
		// The run fails as a store outage (the whole run, to be retried), not as one bad item.
		expect(await run).toBeInstanceOf(StoreUnavailableError);
		expect(await stateOf('ev-5')).toEqual({ event: null, rows: 0, messages: 0 });

		// The redelivery finds the event unclaimed and does the work once.
		await writeWithMessages(store, [invoiceItem(0, 'ev-5')], context('x7'), {
			continueOnFail: false,
		});
		expect(await stateOf('ev-5')).toEqual({
			event: { status: 'done', execution_id: 'x7' },
			rows: 1,
			messages: 1,
		});
	});

	it('two deliveries at once: one writes, the other waits for its commit and is a duplicate', async () => {
		const slow = invoiceItem(0, 'ev-6', {
			statements: [
				{ text: `INSERT INTO ${invoices} (id, amount) VALUES ($1, $2)`, values: ['ev-6', 6] },
				{ text: 'SELECT pg_sleep(0.5)', values: [] },
			],
		});
		const [a, b] = await Promise.all([
			writeWithMessages(store, [slow], context('x8'), { continueOnFail: false }),
			sleep(100).then(
				async () =>
					await writeWithMessages(store, [invoiceItem(0, 'ev-6')], context('x9'), {
						continueOnFail: false,
					}),
			),
		]);
		expect(a[0]).toMatchObject({ ok: true });
		expect(b[0]).toEqual({ index: 0, ok: true, duplicate: true, eventId: 'ev-6' });
		expect(await stateOf('ev-6')).toEqual({
			event: { status: 'done', execution_id: 'x8' },
			rows: 1,
			messages: 1,
		});
	});

	it("the same execution's Event Dedupe claim is completed with the work, its stopped letter closed", async () => {
		const { parkItems } = await import('../../lib/deadletter');
		// An earlier delivery of the event was stopped and parked.
		await parkItems(store, [
			{
				workflowId: 'wf-once',
				step: 'Outbox',
				idempotencyKey: `event:${consumer}:ev-own`,
				errorClass: 'stopped',
				payload: { invoice: 'ev-own' },
			},
		]);
		// Event Dedupe (until the execution ends) claims it first, in the same execution.
		await claimEvents(
			store,
			{
				consumer,
				executionId: 'x-own',
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 600,
				retentionDays: 30,
			},
			[{ index: 0, eventId: 'ev-own', payload: { invoice: 'ev-own' } }],
		);
		const results = await writeWithMessages(store, [invoiceItem(0, 'ev-own')], context('x-own'), {
			continueOnFail: false,
		});
		expect(results[0]).toMatchObject({ ok: true, messages: [{ enqueued: true }] });
		expect(await stateOf('ev-own')).toEqual({
			event: { status: 'done', execution_id: 'x-own' },
			rows: 1,
			messages: 1,
		});
		const letters = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".dead_letters WHERE idempotency_key = $1`,
			[`event:${consumer}:ev-own`],
		);
		expect(letters).toEqual([{ status: 'replayed' }]);
	});

	it('an event an Event Dedupe claim holds under a live lease fails the item and writes nothing', async () => {
		await claimEvents(
			store,
			{
				consumer,
				executionId: 'x10',
				mode: ClaimMode.leaseUntilComplete,
				leaseSeconds: 600,
				retentionDays: 30,
			},
			[{ index: 0, eventId: 'ev-7' }],
		);
		const results = await writeWithMessages(store, [invoiceItem(0, 'ev-7')], context('x11'), {
			continueOnFail: true,
		});
		expect(results[0]).toMatchObject({ ok: false });
		const error = (results[0] as { error: ItemError }).error;
		expect(error).toBeInstanceOf(ItemError);
		expect(error.message).toBe('Item 0: event ev-7 is being processed by execution x10');
		expect(await stateOf('ev-7')).toEqual({
			event: { status: 'in_progress', execution_id: 'x10' },
			rows: 0,
			messages: 0,
		});
	});

	it('bad identifiers are refused with the item index, and nothing is written', async () => {
		const results = await writeWithMessages(
			store,
			[invoiceItem(0, '', { statements: [] }), invoiceItem(1, 'ev-8')],
			context('x12'),
			{ continueOnFail: true },
		);
		expect(results[0]).toMatchObject({ ok: false, error: { itemIndex: 0 } });
		expect((results[0] as { error: Error }).error.message).toMatch(/^Item 0 /);
		expect(results[1]).toMatchObject({ ok: true });
		await expect(
			writeWithMessages(
				store,
				[
					{
						...invoiceItem(0, 'ev-9'),
						event: { consumer: 'a\u0000b', eventId: 'ev-9', retentionDays: 30 },
					},
				],
				context('x13'),
				{ continueOnFail: true },
			),
		).rejects.toBeInstanceOf(ConfigurationError);
		expect(await stateOf('ev-9')).toEqual({ event: null, rows: 0, messages: 0 });
	});
});
