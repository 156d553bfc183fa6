import { composeAlert } from '../../lib/alerts';
import { handleConsoleRequest } from '../../lib/console';
import { getDeadLetters, workflowFingerprint } from '../../lib/deadletter';
import { DEFAULT_POLICY, runWrites } from '../../lib/idempotency';
import { fileTarget } from '../helpers/target';
import { fetchSender } from '../helpers/send';
import { testStore } from '../helpers/store';
import { writeContexts } from '../helpers/writeContext';
import { writeRequest } from '../helpers/writeRequest';

const { store, cleanup } = testStore('dlrecord');
const target = fileTarget();
afterAll(cleanup);

const context = writeContexts({
	workflowId: 'wf-orders',
	workflowName: 'Orders',
	node: 'Create Invoice',
	policy: { ...DEFAULT_POLICY, maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 200 },
	concurrency: 2,
});
const write = (key: string, body: unknown) =>
	writeRequest({ scope: 'billing', key, url: '/invoices', body });

describe('the complete dead-letter record', () => {
	it('a write that fails 503, 503, 503 parks with its three attempts, delays and no secret', async () => {
		target.route('/invoices-down');
		target.script(
			'/invoices-down',
			{ status: 503, body: { message: 'upstream down; Authorization: Bearer tok_SECRET_ONE' } },
			{ status: 503, body: { upstream: 'ledger', access_token: 'tok_SECRET_TWO' } },
			{ status: 503, body: { upstream: 'ledger', access_token: 'tok_SECRET_TWO' } },
		);
		const request = write('inv-1', { amount: 12 });
		const [outcome] = await runWrites(store, context(), [request], {
			send: fetchSender(target.url('/invoices-down'), () => ({ amount: 12 })),
		});
		expect(outcome.failure).toMatchObject({ class: 'exhausted', status: 503 });

		const [record] = await getDeadLetters(store, [outcome.failure!.deadLetterId!]);
		const history = record.attempt_history as Array<Record<string, unknown>>;
		expect(history.map((a) => [a.attempt, a.kind, a.status, a.class])).toEqual([
			[1, 'response', 503, 'transient'],
			[2, 'response', 503, 'transient'],
			[3, 'response', 503, 'transient'],
		]);
		// A delay was chosen before attempts 2 and 3; after the last none was.
		expect(history[0].delayMs).toEqual(expect.any(Number));
		expect(history[1].delayMs).toEqual(expect.any(Number));
		expect(history[2].delayMs).toBeUndefined();
		expect(history.every((a) => typeof a.at === 'string' && a.execution)).toBe(true);
		const [first, second] = target.requestsTo('/invoices-down');
		expect(second.at - first.at).toBeGreaterThanOrEqual(Number(history[0].delayMs) - 5);
		expect(String(history[0].message)).toContain('upstream down');

		const stored = JSON.stringify(record);
		expect(stored).not.toContain('tok_SECRET');

		const alert = composeAlert(record);
		expect(alert.text).toContain('Last attempts: #1 HTTP 503 transient, next in');
		expect(alert.text).toMatch(/#3 HTTP 503 transient \(/);
		expect(alert.text).not.toContain('tok_SECRET');

		const page = await handleConsoleRequest(store, {
			headers: {},
			query: { view: 'item', id: record.id },
		});
		expect(page.body.match(/<tr class="attempt">/g)).toHaveLength(3);
		expect(page.body).not.toContain('tok_SECRET');
	});

	it('a fingerprint counts what nodes do, not their names or order', () => {
		const http = { type: 'n8n-nodes-base.httpRequest', typeVersion: 4, parameters: { url: 'a' } };
		const set = { type: 'n8n-nodes-base.set', typeVersion: 3, parameters: { x: 1, y: 2 } };
		const before = workflowFingerprint([http, set]);
		expect(before).toMatch(/^fingerprint:[0-9a-f]{64}$/);
		expect(
			workflowFingerprint([{ ...set, parameters: { y: 2, x: 1 }, name: 'Renamed' } as never, http]),
		).toBe(before);
		expect(workflowFingerprint([http, { ...set, parameters: { x: 1, y: 3 } }])).not.toBe(before);
	});

	it('a record parked before the workflow changed says so in the console; the newer one does not', async () => {
		target.route('/invoices-refused');
		target.script('/invoices-refused', { status: 422 }, { status: 422 });
		const send = { send: fetchSender(target.url('/invoices-refused'), () => ({ amount: 1 })) };
		const [old] = await runWrites(
			store,
			context({ sourceVersion: 'fingerprint:old' }),
			[write('inv-old', { amount: 1 })],
			send,
		);
		const [fresh] = await runWrites(
			store,
			context({ sourceVersion: 'fingerprint:new' }),
			[write('inv-new', { amount: 1 })],
			send,
		);
		const [oldRecord, newRecord] = await getDeadLetters(store, [
			old.failure!.deadLetterId!,
			fresh.failure!.deadLetterId!,
		]);
		expect(oldRecord.source_version).toBe('fingerprint:old');
		expect(newRecord.source_version).toBe('fingerprint:new');
		const page = async (id: string) =>
			(await handleConsoleRequest(store, { headers: {}, query: { view: 'item', id } })).body;
		const oldPage = await page(oldRecord.id);
		expect(oldPage).toContain('The workflow changed since this item was parked');
		expect(oldPage).toContain('fingerprint:new');
		expect(await page(newRecord.id)).not.toContain('workflow changed');
	});
});
