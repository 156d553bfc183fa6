import { consoleSecret, formToken, handleConsoleRequest } from '../../lib/console';
import {
	getDeadLetters,
	returnStaleCompensations,
	takeDueAlerts,
	takeForReplay,
	updateDeadLetterStatus,
} from '../../lib/deadletter';
import {
	compensateDeadLetter,
	type CompensateDeps,
	type Compensation,
	DEFAULT_POLICY,
	fetchCompensationSender,
	runWrites,
	type SendResult,
	type WriteContext,
} from '../../lib/idempotency';
import { fileTarget } from '../helpers/target';
import { writeContext } from '../helpers/writeContext';
import { adminQuery, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';

const { store, schema, cleanup } = testStore('compensate');
const target = fileTarget();
afterAll(cleanup);

const context = (executionId: string, node: string): WriteContext =>
	writeContext({
		workflowId: 'wf-signup',
		workflowName: 'Signup',
		executionId,
		node,
		policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50 },
		concurrency: 1,
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
		[writeRequest({ scope: 'signup', key: `ana:${path}`, url: path, body, compensation })],
		{ send: (request) => send(target.url(path), 'POST', request.key, body) },
	);
	return outcome;
}

/** The status of each key record of the flow's scope. */
async function keyStatuses(...keys: string[]): Promise<Record<string, string>> {
	const rows = await adminQuery<{ key: string; status: string }>(
		`SELECT key, status FROM "${schema}".idempotency_keys WHERE scope = 'signup' AND key = ANY($1) ORDER BY key`,
		[keys],
	);
	return Object.fromEntries(rows.map((r) => [r.key, r.status]));
}

const deps: CompensateDeps = {
	send: (request) => send(request.url, request.method, request.key, request.body),
};

describe('Compensate', () => {
	it('a compensation whose run died is handed back to a person, alerted, and never taken for replay', async () => {
		for (const path of ['/stalls', '/stalls-next', '/stalls-undo']) target.route(path);
		target.script('/stalls-next', { status: 422, body: { message: 'no plan' } });
		const first = await step(
			'exec-stall',
			'Create Stall',
			'/stalls',
			{ n: 1 },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/stalls-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-stall', 'Next', '/stalls-next', { n: 1 });
		expect([first.ok, failed.ok]).toEqual([true, false]);
		const id = failed.failure!.deadLetterId!;
		// The reversal hangs (the run died in it, as far as the store can tell).
		let release: (result: SendResult) => void = () => undefined;
		const hung = new Promise<SendResult>((resolve) => (release = resolve));
		const running = compensateDeadLetter(
			store,
			{
				id,
				actor: 'ops',
				executionId: 'console-dies',
				policy: { ...DEFAULT_POLICY, maxAttempts: 1 },
			},
			{ send: () => hung },
		);
		const held = async () => (await getDeadLetters(store, [id]))[0];
		for (let i = 0; i < 100 && (await held()).status !== 'being_fixed'; i++)
			await new Promise((resolve) => setTimeout(resolve, 20));
		expect(await held()).toMatchObject({ status: 'being_fixed', taken_by: 'compensation: ops' });
		await adminQuery(
			`UPDATE "${schema}".dead_letters SET updated_at = now() - interval '31 minutes' WHERE id = $1`,
			[id],
		);
		// A replay run's stale take leaves it alone: its steps may be half reversed.
		expect(
			(await takeForReplay(store, { taker: 'replay-run', limit: 50 })).map((r) => String(r.id)),
		).not.toContain(String(id));
		expect(await returnStaleCompensations(store, { actor: 'Recover', limit: 50 })).toEqual([
			String(id),
		]);
		const back = await held();
		expect(back).toMatchObject({ status: 'new', taken_by: null });
		const due = await takeDueAlerts(store, 50);
		expect(due.map((d) => String(d.id))).toContain(String(id));
		const [{ reason }] = await adminQuery<{ reason: string }>(
			`SELECT reason FROM "${schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id DESC LIMIT 1`,
			[id],
		);
		expect(reason).toMatch(/^compensation interrupted/);
		// The dead run's late end changes nothing: the record moved on.
		release({ kind: 'not_sent', code: 'ECONNREFUSED', message: 'refused' });
		await running.catch(() => undefined);
		expect((await held()).status).toBe('new');
		expect(target.effectsOf('/stalls-undo')).toHaveLength(0);
	});

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

	it('a compensated step stays compensated: a later run with its key is refused, naming when and by whom, and sends nothing', async () => {
		for (const path of ['/people', '/deals', '/people-undo']) target.route(path);
		target.script('/deals', { status: 400, body: { message: 'pipeline closed' } });
		const person = await step(
			'exec-c1',
			'Create Person',
			'/people',
			{ name: 'Cy' },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/people-undo')}?id={{ $json.id }}`,
			},
		);
		const deal = await step('exec-c1', 'Create Deal', '/deals', { amount: 5 });
		expect([person.ok, deal.ok]).toEqual([true, false]);
		const id = deal.failure!.deadLetterId!;
		const done = await compensateDeadLetter(
			store,
			{ id, actor: 'ops@example.com', executionId: 'console-c1' },
			deps,
		);
		expect(done.result).toBe('compensated');
		const [row] = await adminQuery<{ status: string; compensated_by: string }>(
			`SELECT status, compensated_by FROM "${schema}".idempotency_keys WHERE scope = 'signup' AND key = 'ana:/people'`,
		);
		expect(row).toEqual({ status: 'compensated', compensated_by: 'ops@example.com' });

		// The sender delivers the signup again: the person is not "created" from the saved response.
		const again = await step('exec-c2', 'Create Person', '/people', { name: 'Cy' });
		expect(again.ok).toBe(false);
		expect(again.replayed).toBe(false);
		expect(again.failure!.class).toBe('conflict');
		expect(again.failure!.message).toMatch(
			new RegExp(
				`^key ana:/people was compensated at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, by ops@example.com \\(dead letter ${id}\\)`,
			),
		);
		expect(target.requestsTo('/people')).toHaveLength(1);
		expect(target.effectsOf('/people-undo')).toHaveLength(1);
	});

	it('Compensate is refused while the Replay workflow holds the record, naming the run; nothing is sent', async () => {
		for (const path of ['/firms', '/quotes', '/firms-undo']) target.route(path);
		target.script('/quotes', { status: 400 });
		await step(
			'exec-r1',
			'Create Firm',
			'/firms',
			{ name: 'Dee' },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/firms-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-r1', 'Create Quote', '/quotes', { amount: 1 });
		const id = failed.failure!.deadLetterId!;
		await updateDeadLetterStatus(store, { id, to: 'replay_requested', actor: 'ops' });
		const taken = await takeForReplay(store, {
			taker: 'Replay workflow (execution 77)',
			limit: 10,
			workflowId: 'wf-signup',
		});
		expect(taken.map((r) => r.id)).toContain(id);

		await expect(
			compensateDeadLetter(store, { id, actor: 'maria', executionId: 'console-r1' }, deps),
		).rejects.toThrow(
			/is held by a replay \(Replay workflow \(execution 77\) since \d{4}-[^)]+\): it cannot be compensated/,
		);
		expect(target.requestsTo('/firms-undo')).toHaveLength(0);
		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe('being_fixed');
		const [key] = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".idempotency_keys WHERE scope = 'signup' AND key = 'ana:/firms'`,
		);
		expect(key.status).toBe('succeeded');
	});

	it('while Compensate runs it holds the record: the Replay workflow cannot take it', async () => {
		for (const path of ['/carts', '/pay', '/carts-undo']) target.route(path);
		target.script('/pay', { status: 400 });
		await step(
			'exec-r2',
			'Create Cart',
			'/carts',
			{ sku: 2 },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/carts-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-r2', 'Pay', '/pay', { sku: 2 });
		const id = failed.failure!.deadLetterId!;
		await updateDeadLetterStatus(store, { id, to: 'replay_requested', actor: 'ops' });
		let during: { status: string; taken: string[] } | undefined;
		const result = await compensateDeadLetter(
			store,
			{ id, actor: 'maria', executionId: 'console-r2' },
			{
				send: async (request, wire) => {
					const taken = await takeForReplay(store, {
						taker: 'Replay workflow (execution 78)',
						limit: 10,
						workflowId: 'wf-signup',
					});
					const [now] = await getDeadLetters(store, [id]);
					during = { status: now.status, taken: taken.map((r) => r.id) };
					return await deps.send(request, wire);
				},
			},
		);
		expect(during).toEqual({ status: 'being_fixed', taken: [] });
		expect(result.result).toBe('compensated');
		expect(target.effectsOf('/carts-undo')).toHaveLength(1);
	});

	it('a record whose steps were compensated is never replayed: the take hands it back, the console refuses, naming who compensated', async () => {
		for (const path of ['/users', '/teams', '/invite', '/users-undo', '/teams-undo'])
			target.route(path);
		target.script('/invite', { status: 400 });
		target.script('/users-undo', { status: 400, body: { message: 'user locked' } });
		await step(
			'exec-r3',
			'Create User',
			'/users',
			{ name: 'Eve' },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/users-undo')}?id={{ $json.id }}` },
		);
		await step(
			'exec-r3',
			'Create Team',
			'/teams',
			{ name: 'Eve' },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/teams-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-r3', 'Invite', '/invite', { name: 'Eve' });
		const id = failed.failure!.deadLetterId!;
		// The team is reversed, the user's compensation fails: half reversed, back to a person.
		const partial = await compensateDeadLetter(
			store,
			{ id, actor: 'ops@example.com', executionId: 'console-r3' },
			deps,
		);
		expect(partial.result).toBe('failed');
		expect((await getDeadLetters(store, [id]))[0].status).toBe('new');

		// A batch replay asks for it anyway: the Replay workflow's take gives it back to a person.
		await updateDeadLetterStatus(store, { id, to: 'replay_requested', actor: 'batch' });
		const taken = await takeForReplay(store, {
			taker: 'Replay workflow (execution 79)',
			limit: 10,
			workflowId: 'wf-signup',
		});
		expect(taken.map((r) => r.id)).not.toContain(id);
		const [back] = await getDeadLetters(store, [id]);
		expect(back.status).toBe('new');
		expect(back.history.at(-1)!.reason).toMatch(
			/cannot be replayed: Compensate reversed its steps Create Team \(compensated at \d{4}-[^,]+, by ops@example.com\)/,
		);

		const token = formToken(await consoleSecret(store), 'maria');
		const headers = { authorization: `Basic ${Buffer.from('maria:x').toString('base64')}` };
		const replay = await handleConsoleRequest(store, {
			headers,
			query: { view: 'item', id },
			body: { action: 'replay', id, token },
		});
		expect(replay.statusCode).toBe(422);
		expect(replay.body).toContain('cannot be replayed: Compensate reversed its steps Create Team');
		expect((await getDeadLetters(store, [id]))[0].status).toBe('new');
		expect(target.requestsTo('/invite')).toHaveLength(1);
	});

	it('a step under a key of 251 characters is compensated under a hashed key, once', async () => {
		// Its `:compensate` key would be 262 characters, over what a key may be: it was refused.
		const path = `/l${'o'.repeat(245)}`;
		for (const route of [path, '/long-next', '/long-undo']) target.route(route);
		target.script('/long-next', { status: 400 });
		const first = await step(
			'exec-long',
			'Create Long',
			path,
			{ n: 1 },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/long-undo')}?id={{ $json.id }}` },
		);
		expect(first.key).toHaveLength(251);
		const failed = await step('exec-long', 'Next', '/long-next', { n: 1 });
		const id = failed.failure!.deadLetterId!;
		const press = () =>
			compensateDeadLetter(store, { id, actor: 'ops', executionId: 'console-long' }, deps);
		const [done, again] = [await press(), await press()];
		expect(done.result).toBe('compensated');
		expect(done.sent[0].key).toMatch(/^sha256:[0-9a-f]{64}$/);
		expect(again.result).toBe('already');
		expect(target.effectsOf('/long-undo')).toHaveLength(1);
		expect(target.effectsOf('/long-undo')[0].key).toBe(done.sent[0].key);
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
		// The refused reversal did nothing: Create Order is done again; Create Invoice was reversed.
		expect(await keyStatuses('ana:/orders', 'ana:/invoices')).toEqual({
			'ana:/orders': 'succeeded',
			'ana:/invoices': 'compensated',
		});

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

	it('a reversal whose outcome is unknown leaves its step compensated and says to check the target', async () => {
		for (const path of ['/boxes', '/label', '/boxes-undo']) target.route(path);
		target.script('/label', { status: 400 });
		// Every attempt of the reversal is committed, then its connection reset: outcome unknown.
		target.script('/boxes-undo', { reset: 'after' }, { reset: 'after' }, { reset: 'after' });
		await step(
			'exec-5',
			'Pack Box',
			'/boxes',
			{ sku: 5 },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/boxes-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-5', 'Print Label', '/label', { sku: 5 });
		const result = await compensateDeadLetter(
			store,
			{
				id: failed.failure!.deadLetterId!,
				actor: 'ops',
				executionId: 'console-5',
				policy: { ...DEFAULT_POLICY, maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50 },
			},
			fetchCompensationSender(2_000),
		);
		expect(result.result).toBe('failed');
		expect(result.failure!.message).toContain('Pack Box stays compensated');
		expect(target.effectsOf('/boxes-undo').length).toBeGreaterThan(0);
		expect(await keyStatuses('ana:/boxes')).toEqual({ 'ana:/boxes': 'compensated' });
		// A later run with the step's key is refused and sends nothing.
		const later = await step('exec-6', 'Pack Box', '/boxes', { sku: 5 });
		expect(later.ok).toBe(false);
		expect(later.failure!.message).toContain('was compensated at');
		expect(target.effectsOf('/boxes')).toHaveLength(1);
	});

	it('a failed step that succeeds on a later delivery while Compensate holds its record: the record stays open for the person, saying so', async () => {
		for (const path of ['/pallets', '/manifest', '/pallets-undo']) target.route(path);
		target.script('/manifest', { status: 400 });
		target.script('/pallets-undo', { status: 409, body: { message: 'pallet already shipped' } });
		await step(
			'exec-8',
			'Pack Pallet',
			'/pallets',
			{ sku: 8 },
			{
				kind: 'request',
				method: 'DELETE',
				url: `${target.url('/pallets-undo')}?id={{ $json.id }}`,
			},
		);
		const failed = await step('exec-8', 'Print Manifest', '/manifest', { sku: 8 });
		const id = failed.failure!.deadLetterId!;
		let later: Awaited<ReturnType<typeof step>> | undefined;
		const result = await compensateDeadLetter(
			store,
			{ id, actor: 'ops', executionId: 'console-8' },
			{
				// The sender redelivers while the person reverses: its success finds the record held.
				send: async (request, wire) => {
					later ??= await step('exec-9', 'Print Manifest', '/manifest', { sku: 8 });
					return await deps.send(request, wire);
				},
			},
		);
		expect(later?.ok).toBe(true);
		expect(result.result).toBe('failed');
		expect(target.effectsOf('/manifest')).toHaveLength(1);
		expect(target.effectsOf('/pallets-undo')).toHaveLength(0);
		// Nothing was reversed and the item's last step is done; the person asked for a reversal,
		// so the record is theirs to resolve or compensate again, and its history says why.
		expect(await keyStatuses('ana:/pallets', 'ana:/manifest')).toEqual({
			'ana:/pallets': 'succeeded',
			'ana:/manifest': 'succeeded',
		});
		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe('new');
		const [last] = await adminQuery<{ from_status: string; reason: string }>(
			`SELECT from_status, reason FROM "${schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id DESC LIMIT 1`,
			[id],
		);
		expect(last.from_status).toBe('being_fixed');
		expect(last.reason).toContain(
			'meanwhile its failed step (Print Manifest) succeeded on a later delivery: resolve the record if the item should stand, or compensate again',
		);
	});

	it('two presses at once, the first refused by the target: the step that ends reversed reads compensated, the record closed', async () => {
		for (const path of ['/crates', '/ship-crate', '/crates-undo']) target.route(path);
		target.script('/ship-crate', { status: 400 });
		// The first reversal is refused (nothing done); the next one succeeds.
		target.script('/crates-undo', { status: 422, body: { message: 'locked' } });
		await step(
			'exec-7',
			'Pack Crate',
			'/crates',
			{ sku: 7 },
			{ kind: 'request', method: 'DELETE', url: `${target.url('/crates-undo')}?id={{ $json.id }}` },
		);
		const failed = await step('exec-7', 'Ship Crate', '/ship-crate', { sku: 7 });
		const id = failed.failure!.deadLetterId!;
		const press = (executionId: string) =>
			compensateDeadLetter(
				store,
				{
					id,
					actor: 'ops',
					executionId,
					policy: { ...DEFAULT_POLICY, maxAttempts: 1, baseDelayMs: 20, maxDelayMs: 50 },
				},
				deps,
			).catch((error: unknown) => error);
		const results = await Promise.all([press('console-7a'), press('console-7b')]);
		const reversed = target.effectsOf('/crates-undo').length > 0;
		// Whatever the interleaving, the step's record says what the target did.
		expect(await keyStatuses('ana:/crates')).toEqual({
			'ana:/crates': reversed ? 'compensated' : 'succeeded',
		});
		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe(reversed ? 'compensated' : 'new');
		expect(results.some((r) => (r as { result?: string }).result === 'compensated')).toBe(reversed);
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
