import { consoleSecret, formToken, handleConsoleRequest } from '../../lib/console';
import { getDeadLetters } from '../../lib/deadletter';
import {
	compensateDeadLetter,
	type CompensateDeps,
	type Compensation,
	DEFAULT_POLICY,
	requestFingerprint,
	runWrites,
	type SendResult,
	type WriteContext,
} from '../../lib/idempotency';
import { TestTarget } from '../../dev/target/server';
import { adminQuery, testStore } from '../helpers/store';

const { store, schema, cleanup } = testStore('compensate');
const target = new TestTarget();
beforeAll(() => target.start());
afterAll(async () => {
	await target.stop();
	await cleanup();
});

const context = (executionId: string, node: string): WriteContext => ({
	workflowId: 'wf-signup',
	workflowName: 'Signup',
	executionId,
	node,
	retentionDays: 30,
	policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50 },
	onUnknown: 'retry',
	concurrency: 1,
	maxSavedBodyChars: 65_536,
	park: true,
});

async function send(url: string, method: string, key: string, body: unknown): Promise<SendResult> {
	const response = await fetch(url, {
		method,
		headers: { 'content-type': 'application/json', 'idempotency-key': key },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	let parsed: unknown = text;
	try {
		parsed = JSON.parse(text);
	} catch {
		/* text */
	}
	return {
		kind: 'response',
		answer: {
			status: response.status,
			headers: Object.fromEntries(response.headers.entries()),
			body: parsed,
		},
	};
}

/** One step of the signup flow: a write of its own node, with its compensation. */
async function step(
	executionId: string,
	node: string,
	path: string,
	body: unknown,
	compensation?: Compensation,
) {
	const [outcome] = await runWrites(
		store,
		context(executionId, node),
		[
			{
				index: 0,
				scope: 'signup',
				key: `ana:${path}`,
				fingerprint: requestFingerprint({ method: 'POST', url: path, body }),
				payload: body,
				compensation,
			},
		],
		{ send: (request) => send(target.url(path), 'POST', request.key, body) },
	);
	return outcome;
}

const deps: CompensateDeps = {
	send: (request) => send(request.url, request.method, request.key, request.body),
};

describe('Compensate', () => {
	it('a three-step flow failing at step 3 is reversed newest first, once, with evidence', async () => {
		for (const path of ['/contacts', '/accounts', '/welcome', '/contacts-undo', '/accounts-undo'])
			target.route(path);
		target.script('/welcome', { status: 422, body: { message: 'template missing' } });
		const contact = await step(
			'exec-1',
			'Create Contact',
			'/contacts',
			{ name: 'Ana' },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/contacts-undo')}?id={{ $json.id }}`,
			},
		);
		const account = await step(
			'exec-1',
			'Open Account',
			'/accounts',
			{ plan: 'pro' },
			{
				kind: 'request',
				method: 'POST',
				url: target.url('/accounts-undo'),
				body: '{"account": "{{ $json.id }}", "reason": "signup failed"}',
			},
		);
		const welcome = await step(
			'exec-1',
			'Send Welcome',
			'/welcome',
			{ to: 'ana' },
			{
				kind: 'manual',
				plan: 'nothing to undo',
			},
		);
		expect([contact.ok, account.ok, welcome.ok]).toEqual([true, true, false]);
		const id = welcome.failure!.deadLetterId!;

		const [parked] = await getDeadLetters(store, [id]);
		expect((parked.steps as Array<{ step: string }>).map((s) => s.step)).toEqual([
			'Create Contact',
			'Open Account',
		]);

		const first = await compensateDeadLetter(
			store,
			{ id, actor: 'ops@example.com', executionId: 'console-1' },
			deps,
		);
		const second = await compensateDeadLetter(
			store,
			{ id, actor: 'ops@example.com', executionId: 'console-2' },
			deps,
		);
		expect(first.result).toBe('compensated');
		expect(first.sent.map((s) => [s.step, s.method, s.status])).toEqual([
			['Open Account', 'POST', 201],
			['Create Contact', 'DELETE', 201],
		]);
		expect(second.result).toBe('already');

		// Each step reversed once, newest first, with what its saved response said.
		const accountUndo = target.effectsOf('/accounts-undo');
		const contactUndo = target.requestsTo('/contacts-undo');
		expect(accountUndo).toHaveLength(1);
		expect(contactUndo).toHaveLength(1);
		expect(accountUndo[0].body).toEqual({
			account: String((account.answer!.body as { id: number }).id),
			reason: 'signup failed',
		});
		expect(contactUndo[0].method).toBe('DELETE');
		expect(accountUndo[0].at).toBeLessThanOrEqual(contactUndo[0].at);
		expect(accountUndo[0].key).toBe('ana:/accounts:compensate');

		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe('compensated');
		const reasons = record.history.map((e) => e.reason ?? '');
		expect(reasons.filter((r) => r.startsWith('compensation of Open Account'))).toHaveLength(1);
		expect(reasons.find((r) => r.startsWith('compensation of Create Contact'))).toMatch(
			/DELETE .*contacts-undo\?id=\d+ -> HTTP 201/,
		);
		expect(record.history.at(-1)).toMatchObject({
			actor: 'ops@example.com',
			toStatus: 'compensated',
		});
	});

	it('a request template is kept masked, and one that would send a masked value is refused, nothing sent', async () => {
		for (const path of ['/prospects', '/offers', '/alert', '/prospects-undo', '/offers-undo'])
			target.route(path);
		target.script('/alert', { status: 422, body: { message: 'no channel' } });
		const SECRET = 'Kx9ApiSecret4Zq';
		const lead = await step(
			'exec-masked',
			'Create Lead',
			'/prospects',
			{ name: 'Bo' },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/prospects-undo')}?id={{ $json.id }}&api_key=${SECRET}`,
			},
		);
		const quote = await step(
			'exec-masked',
			'Create Quote',
			'/offers',
			{ amount: 1 },
			{
				kind: 'request',
				method: 'POST',
				url: target.url('/offers-undo'),
				body: `{"quote": "{{ $json.id }}", "password": "${SECRET}"}`,
			},
		);
		const notify = await step('exec-masked', 'Notify', '/alert', { to: 'bo' });
		expect([lead.ok, quote.ok, notify.ok]).toEqual([true, true, false]);

		const rows = await adminQuery<{ compensation: unknown }>(
			`SELECT compensation FROM "${schema}".idempotency_keys WHERE key IN ('ana:/prospects', 'ana:/offers')`,
		);
		expect(rows).toHaveLength(2);
		expect(JSON.stringify(rows)).not.toContain(SECRET);

		const result = await compensateDeadLetter(
			store,
			{ id: notify.failure!.deadLetterId!, actor: 'ops@example.com', executionId: 'console-m' },
			deps,
		);
		expect(result.result).toBe('failed');
		expect(result.failure?.message).toMatch(
			/^the compensation of Create Quote cannot be built: its body would carry a masked value \(\[masked\]\)/,
		);
		expect(target.requestsTo('/offers-undo')).toHaveLength(0);
		expect(target.requestsTo('/prospects-undo')).toHaveLength(0);
		const [record] = await getDeadLetters(store, [notify.failure!.deadLetterId!]);
		expect(record.status).not.toBe('compensated');
	});

	it('a repair plan made from the item is kept masked, like every text the store keeps', async () => {
		// Found by check:fuzz: the plan went into the key record verbatim.
		target.route('/plan', { honoursKey: true });
		const outcome = await step(
			'exec-plan',
			'Open Ticket',
			'/plan',
			{ n: 1 },
			{
				kind: 'manual',
				plan: 'Close the ticket; the API wants Authorization: Bearer tok_9f8e7d6c5b4a',
			},
		);
		expect(outcome.ok).toBe(true);
		const [row] = await adminQuery<{ compensation: { kind: string; plan: string } }>(
			`SELECT compensation FROM "${schema}".idempotency_keys WHERE key = $1`,
			['ana:/plan'],
		);
		expect(row.compensation.kind).toBe('manual');
		expect(row.compensation.plan).toMatch(/^Close the ticket; the API wants Authorization: /);
		expect(row.compensation.plan).not.toContain('tok_9f8e7d6c5b4a');
	});

	it('an ID that is not a dead letter ID is refused with what to set, nothing sent', async () => {
		// Found by check:fuzz: an object as the ID threw a TypeError instead of the engine's error.
		const before = target.requestsTo('/accounts-undo').length;
		for (const bad of [{}, 'abc', '', ' 12x']) {
			await expect(
				compensateDeadLetter(
					store,
					{ id: bad as string, actor: 'maria', executionId: 'exec-bad' },
					deps,
				),
			).rejects.toThrow(/is not a dead letter ID/);
		}
		expect(target.requestsTo('/accounts-undo')).toHaveLength(before);
	});

	it('pressing Compensate again after a failed compensation sends only what was not reversed', async () => {
		for (const path of ['/orders', '/invoices', '/ship', '/orders-undo', '/invoices-undo'])
			target.route(path);
		target.script('/ship', { status: 400 });
		target.script('/orders-undo', { status: 400, body: { message: 'order locked' } });
		await step(
			'exec-2',
			'Create Order',
			'/orders',
			{ sku: 1 },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/orders-undo')}?id={{ $json.id }}`,
			},
		);
		await step(
			'exec-2',
			'Create Invoice',
			'/invoices',
			{ sku: 1 },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/invoices-undo')}?id={{ $json.id }}`,
			},
		);
		const failed = await step('exec-2', 'Ship', '/ship', { sku: 1 });
		const id = failed.failure!.deadLetterId!;

		const first = await compensateDeadLetter(
			store,
			{ id, actor: 'ops', executionId: 'console-3' },
			deps,
		);
		expect(first.result).toBe('failed');
		expect(first.failure).toMatchObject({ step: 'Create Order', key: 'ana:/orders:compensate' });
		expect(first.failure!.deadLetterId).toEqual(expect.any(String));
		const [open] = await getDeadLetters(store, [id]);
		expect(open.status).toBe('new');

		const again = await compensateDeadLetter(
			store,
			{ id, actor: 'ops', executionId: 'console-4' },
			deps,
		);
		expect(again.result).toBe('compensated');
		expect(again.sent.map((s) => [s.step, s.replayed])).toEqual([
			['Create Invoice', true],
			['Create Order', false],
		]);
		expect(target.requestsTo('/invoices-undo')).toHaveLength(1);
		expect(target.effectsOf('/orders-undo')).toHaveLength(1);
	});

	it('the console lists the steps with their compensations and its button compensates once', async () => {
		for (const path of ['/leads', '/tasks', '/notify', '/leads-undo']) target.route(path);
		target.script('/notify', { status: 400 });
		await step(
			'exec-3',
			'Create Lead',
			'/leads',
			{ name: 'Bo' },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/leads-undo')}?lead={{ $json.id }}`,
			},
		);
		await step(
			'exec-3',
			'Create Task',
			'/tasks',
			{ name: 'Bo' },
			{
				kind: 'manual',
				plan: 'close the follow-up task by hand',
			},
		);
		const failed = await step('exec-3', 'Notify', '/notify', { name: 'Bo' });
		const id = failed.failure!.deadLetterId!;
		const token = formToken(await consoleSecret(store), 'maria');
		const headers = { authorization: `Basic ${Buffer.from('maria:x').toString('base64')}` };

		const page = await handleConsoleRequest(store, { headers, query: { view: 'item', id } });
		expect(page.body.match(/<tr class="step">/g)).toHaveLength(2);
		expect(page.body).toContain('close the follow-up task by hand');
		expect(page.body).toContain('action-compensate');

		const press = () =>
			handleConsoleRequest(store, {
				headers,
				query: { view: 'item', id },
				body: { action: 'compensate', id, token, note: 'signup abandoned' },
			});
		expect((await press()).statusCode).toBe(303);
		expect((await press()).statusCode).toBe(422);
		expect(target.requestsTo('/leads-undo')).toHaveLength(1);
		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe('compensated');
		expect(record.history.at(-1)).toMatchObject({ actor: 'maria', toStatus: 'compensated' });
		expect(record.history.at(-1)!.reason).toContain(
			'[ ] Create Task: close the follow-up task by hand',
		);
	});
});
