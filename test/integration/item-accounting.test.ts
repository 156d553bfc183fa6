import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { getDeadLettersByKey, takeDueAlerts } from '../../lib/deadletter';
import {
	claimEvents,
	ClaimMode,
	completeEvents,
	eventLetterKey,
	ExecutionEnd,
	failExecution,
	failExecutionInProcess,
	keeperFor,
	parkUnsettledClaims,
	settleExecutionClaims,
	stopExecution,
	takeCrashed,
} from '../../lib/dedupe';
import { DEFAULT_POLICY, runWrites } from '../../lib/idempotency';
import { purgeExpired } from '../../lib/control/housekeeping';
import { pause, resume } from '../../lib/control/pauses';

import { fetchSender } from '../helpers/send';
import { adminQuery, testStore } from '../helpers/store';
import { writeRequest } from '../helpers/writeRequest';
import { writeContext } from '../helpers/writeContext';

/**
 * Every delivered item ends done, in an open dead letter that names it, or dropped by a named
 * rule: at the edges of n8n's execution lifecycle (a failed claim met again under Check Order,
 * an error whose text says "crash", a crash n8n reports twice, a cancelled execution).
 */
const { store, schema, cleanup } = testStore('item_accounting');
afterAll(cleanup);

let n = 0;
const context = (executionId = `exec-${++n}`) => ({
	consumer: 'orders',
	workflowId: 'wf-orders',
	executionId,
	mode: ClaimMode.untilExecutionEnds,
	leaseSeconds: 60,
	retentionDays: 30,
});
const order = (id: string, version?: number) => ({
	index: 0,
	eventId: id,
	payload: { order: id, amount: 40 },
	...(version === undefined ? {} : { entityKey: `customer-${id}`, version: String(version) }),
});
const claimRow = async (eventId: string) =>
	(
		await adminQuery<{ status: string; execution_id: string; payload: unknown }>(
			`SELECT status, execution_id, payload FROM "${schema}".processed_events WHERE consumer = 'orders' AND event_id = $1`,
			[eventId],
		)
	)[0];
const openLetters = async (eventId: string) =>
	(await getDeadLettersByKey(store, [`event:orders:${eventId}`])).filter((l) =>
		['new', 'held', 'replay_requested', 'being_fixed'].includes(l.status),
	);

describe('Check Order: a failed claim met again by its own redelivery', () => {
	it('is the retry of the same event, not a duplicate of itself: claimed again, item kept', async () => {
		const first = context();
		expect((await claimEvents(store, first, [order('ORD-1', 7)]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, first.executionId, {
			status: ExecutionEnd.error,
			message: 'CRM said 503',
		});
		const again = context();
		const [redelivered] = await claimEvents(store, again, [order('ORD-1', 7)]);
		expect(redelivered.outcome).toBe('new');
		expect(await claimRow('ORD-1')).toMatchObject({
			status: 'in_progress',
			execution_id: again.executionId,
			payload: { order: 'ORD-1', amount: 40 },
		});
		// The error workflow of the first execution runs late: the item is the redelivery's now.
		const late = await failExecution(store, { executionId: first.executionId, crashed: false });
		expect(late.items).toEqual([]);
		expect(await claimRow('ORD-1')).toMatchObject({ status: 'in_progress' });
		// An older version of the entity is still stale, and the same version of another event a
		// duplicate: ordering itself is unchanged.
		const [older] = await claimEvents(store, context(), [
			{ ...order('ORD-1-old', 6), entityKey: 'customer-ORD-1' },
		]);
		expect(older.outcome).toBe('stale');
		const [same] = await claimEvents(store, context(), [
			{ ...order('ORD-1-same', 7), entityKey: 'customer-ORD-1' },
		]);
		expect(same).toMatchObject({ outcome: 'duplicate', reason: 'same_version' });
	});

	it('a dead owner whose lease lapsed: the redelivery takes the item over', async () => {
		const dead = { ...context(), leaseSeconds: 1 };
		await claimEvents(store, dead, [order('ORD-2', 3)]);
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE event_id = 'ORD-2'`,
		);
		const again = context();
		expect((await claimEvents(store, again, [order('ORD-2', 3)]))[0].outcome).toBe('new');
		expect(await claimRow('ORD-2')).toMatchObject({ execution_id: again.executionId });
		expect(await openLetters('ORD-2')).toEqual([]);
	});
});

describe('an error whose text says "crash" is a failure, not a crash', () => {
	const handler = JSON.parse(
		readFileSync(join(__dirname, '../../workflows/error-handler.json'), 'utf8'),
	) as { nodes: Array<{ name: string; parameters: Record<string, string> }> };
	const crashedExpression = handler.nodes
		.find((node) => node.name === 'Settle Failed Execution')!
		.parameters.crashed.replace(/^=\{\{(.*)\}\}$/s, '$1');
	// The bundled Error handler's Crashed expression, evaluated as n8n evaluates it ($json).
	const crashedFor = (execution: {
		lastNodeExecuted?: string;
		error: { name?: string; message?: string; node?: { name: string } };
	}) => new Function('$json', `return (${crashedExpression});`)({ execution }) as boolean;
	const nodeFailure = (name: string, message: string) => ({
		lastNodeExecuted: 'Post to ERP',
		error: { name, message, node: { name: 'Post to ERP' } },
	});

	it('the Error handler tells a crash by what n8n reports, never by the error text', () => {
		// n8n died mid-run and reports it after its restart.
		expect(
			crashedFor({
				lastNodeExecuted: 'Post to ERP',
				error: { name: 'WorkflowCrashedError', message: 'Workflow did not finish' },
			}),
		).toBe(true);
		// A queue-mode worker died: n8n fails its job as stalled (MaxStalledCountError, which
		// reaches the Error Trigger with no name), knowing no node that ran.
		expect(
			crashedFor({
				error: {
					message: 'This execution failed to be processed too many times and will no longer retry.',
				},
			}),
		).toBe(true);
		// A node failed, whatever its text says.
		expect(crashedFor(nodeFailure('NodeApiError', 'Upstream service crashed'))).toBe(false);
		expect(crashedFor(nodeFailure('NodeOperationError', 'Workflow did not finish'))).toBe(false);
		// A failed trigger ran no execution: nothing to settle as a crash.
		expect(
			new Function('$json', `return (${crashedExpression});`)({
				trigger: { error: { message: 'feed answered 500' } },
			}),
		).toBe(false);
	});

	it('a crash whose claims its own hook failed did end: its items are parked, not left to Recover', async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-3')]);
		await settleExecutionClaims(store, run.executionId, {
			status: ExecutionEnd.error,
			message: 'Upstream service crashed',
		});
		const settled = await failExecution(store, {
			executionId: run.executionId,
			crashed: true,
			message: 'Upstream service crashed',
		});
		expect(settled.items.map((item) => item.eventId)).toEqual(['ORD-3']);
		expect(settled.recovering).toBe(0);
	});
});

describe('a crash n8n reports while the process still runs it (a queue-mode job failed as stalled)', () => {
	// n8n fails a queue-mode job whose worker stopped renewing its lock (MaxStalledCountError),
	// and runs the error workflow for it; a worker that was only slow goes on running it.
	const reportedWhileRunning = async (eventId: string) => {
		const run = context();
		await claimEvents(store, run, [order(eventId)]);
		const keeper = keeperFor(store, 60);
		keeper.keep(run.executionId, 60_000);
		const settled = await failExecution(store, {
			executionId: run.executionId,
			crashed: true,
			message: 'This execution failed to be processed too many times',
		});
		expect(settled).toMatchObject({ repeated: false, recovering: 1, items: [] });
		// The live worker's keeper beats again: the crash report must not be undone by it.
		await keeper.beat();
		keeper.drop(run.executionId);
		return run;
	};
	const recover = (executionId: string) =>
		takeCrashed(store, { executionId, limit: 10, maxAttempts: 3, leaseSeconds: 60 });

	it('its later failure leaves the item to Recover, never failed with no one to park it', async () => {
		const run = await reportedWhileRunning('ORD-S1');
		await settleExecutionClaims(store, run.executionId, {
			status: ExecutionEnd.error,
			message: 'CRM said 503',
		});
		const taken = await recover('recover-s1');
		expect(taken.map((item) => [item.eventId, item.givenUp])).toEqual([['ORD-S1', false]]);
		expect(await claimRow('ORD-S1')).toMatchObject({
			status: 'in_progress',
			execution_id: 'recover-s1',
		});
	});

	it('its later success does not complete what Recover now runs: one completion, by Recover', async () => {
		const run = await reportedWhileRunning('ORD-S2');
		await settleExecutionClaims(store, run.executionId, { status: ExecutionEnd.success });
		const taken = await recover('recover-s2');
		expect(taken.map((item) => item.eventId)).toEqual(['ORD-S2']);
		const [done] = await completeEvents(store, 'orders', ['ORD-S2'], 'recover-s2');
		expect(done.changed).toBe(true);
		expect(await claimRow('ORD-S2')).toMatchObject({ status: 'done' });
		expect(await openLetters('ORD-S2')).toEqual([]);
	});
});

describe('n8n reports a crashed execution twice', () => {
	it('the second report settles, parks and alerts nothing once a redelivery did the item', async () => {
		const crashed = context();
		await claimEvents(store, crashed, [order('ORD-4')]);
		const first = await failExecution(store, {
			executionId: crashed.executionId,
			crashed: true,
			message: 'Workflow did not finish',
		});
		expect(first).toMatchObject({ repeated: false, recovering: 1, items: [] });
		// The sender redelivers (its lease ended at the report) and the redelivery succeeds.
		const again = context();
		expect((await claimEvents(store, again, [order('ORD-4')]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, again.executionId, { status: ExecutionEnd.success });
		const second = await failExecution(store, {
			executionId: crashed.executionId,
			crashed: true,
			message: 'Workflow did not finish',
		});
		expect(second).toMatchObject({ repeated: true, items: [], recovering: 0, kept: 0 });
		expect(
			await adminQuery(
				`SELECT reports FROM "${schema}".execution_reports WHERE execution_id = $1`,
				[crashed.executionId],
			),
		).toEqual([{ reports: 2 }]);
		expect(await claimRow('ORD-4')).toMatchObject({ status: 'done' });
		expect(await openLetters('ORD-4')).toEqual([]);
		expect(await getDeadLettersByKey(store, [`execution:${crashed.executionId}`])).toEqual([]);
	});
});

describe('a cancelled execution (Stop, the API, a timeout, a worker drain)', () => {
	it('its items are parked as stopped at the running node; the error workflow n8n may still run parks nothing twice', async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-5'), { ...order('ORD-6'), index: 1 }]);
		const { parked } = await stopExecution(store, {
			executionId: run.executionId,
			workflowId: 'wf-orders',
			workflowName: 'Orders',
			step: 'Post to ERP',
			runLink: `http://n8n.local/workflow/wf-orders/executions/${run.executionId}`,
		});
		expect(parked).toHaveLength(2);
		for (const id of ['ORD-5', 'ORD-6']) {
			expect(await claimRow(id)).toMatchObject({ status: 'failed' });
			const [letter] = await openLetters(id);
			expect(letter).toMatchObject({
				status: 'new',
				error_class: 'stopped',
				step: 'Post to ERP',
				execution_id: run.executionId,
				payload: { order: id, amount: 40 },
			});
		}
		const late = await failExecution(store, { executionId: run.executionId, crashed: false });
		expect(late).toMatchObject({ repeated: true, items: [] });
		expect(await openLetters('ORD-5')).toHaveLength(1);
	});

	it("a stopped execution's letters have their alert due, taken once by Recover", async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-13')]);
		await stopExecution(store, { executionId: run.executionId, step: 'Post to ERP' });
		const due = (await takeDueAlerts(store, 500)).filter(
			(l) => l.idempotency_key === 'event:orders:ORD-13',
		);
		expect(due).toMatchObject([
			{ status: 'new', error_class: 'stopped', step: 'Post to ERP', execution_id: run.executionId },
		]);
		// Once: the next take does not name it again.
		expect(
			(await takeDueAlerts(store, 500)).filter((l) => l.idempotency_key === 'event:orders:ORD-13'),
		).toEqual([]);
	});

	it("a later successful run of the item closes the stopped item's letter", async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-7')]);
		await stopExecution(store, { executionId: run.executionId, step: 'Post to ERP' });
		expect(await openLetters('ORD-7')).toHaveLength(1);
		const again = context();
		expect((await claimEvents(store, again, [order('ORD-7')]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, again.executionId, { status: ExecutionEnd.success });
		expect(await openLetters('ORD-7')).toEqual([]);
		const [closed] = await getDeadLettersByKey(store, ['event:orders:ORD-7']);
		expect(closed.status).toBe('replayed');
	});

	it('an item whose consumer and event ID are both at their limits is parked under a hashed key, and closed by its success', async () => {
		// `event:<consumer>:<event ID>` would be 517 characters, over what a stored key may be: it
		// failed the whole park (and left every item of the execution to Recover).
		const consumer = 'c'.repeat(255);
		const eventId = 'E'.repeat(255);
		const run = { ...context(), consumer };
		await claimEvents(store, run, [
			{ ...order(eventId), index: 0 },
			{ ...order('ORD-12'), index: 1 },
		]);
		const { parked } = await stopExecution(store, {
			executionId: run.executionId,
			step: 'Post to ERP',
		});
		expect(parked).toHaveLength(2);
		const key = eventLetterKey(consumer, eventId);
		expect(key).toMatch(/^event:sha256:[0-9a-f]{64}$/);
		expect(await getDeadLettersByKey(store, [key])).toMatchObject([
			{ status: 'new', error_class: 'stopped', payload: { order: eventId } },
		]);
		const again = { ...context(), consumer };
		expect((await claimEvents(store, again, [order(eventId)]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, again.executionId, { status: ExecutionEnd.success });
		expect(await getDeadLettersByKey(store, [key])).toMatchObject([{ status: 'replayed' }]);
	});

	it("a failed execution's letter is closed by the redelivery that completes the item", async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-8')]);
		await settleExecutionClaims(store, run.executionId, { status: ExecutionEnd.error });
		const settled = await failExecution(store, { executionId: run.executionId, crashed: false });
		expect(settled.items).toHaveLength(1);
		// The error workflow parks it (as the bundled handler does), then the sender redelivers.
		const { parkItems } = await import('../../lib/deadletter');
		await parkItems(store, [
			{
				workflowId: 'wf-orders',
				step: 'Post to ERP',
				idempotencyKey: 'event:orders:ORD-8',
				errorClass: 'execution',
				payload: settled.items[0].payload,
			},
		]);
		const lease = { ...context(), mode: ClaimMode.leaseUntilComplete };
		expect((await claimEvents(store, lease, [order('ORD-8')]))[0].outcome).toBe('new');
		await completeEvents(store, 'orders', ['ORD-8'], lease.executionId);
		expect(await openLetters('ORD-8')).toEqual([]);
	});
});

describe('a failed execution whose workflow names no error workflow', () => {
	it('its end parks each kept item with the error, alert due; an error workflow run after parks nothing twice', async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-20'), { ...order('ORD-21'), index: 1 }]);
		const { parked } = await failExecutionInProcess(store, {
			executionId: run.executionId,
			workflowId: 'wf-orders',
			workflowName: 'Orders',
			step: 'Post to ERP',
			runLink: `http://n8n.local/workflow/wf-orders/executions/${run.executionId}`,
			reason: 'ERP refused the order: 422 amount must be positive',
		});
		expect(parked).toHaveLength(2);
		for (const id of ['ORD-20', 'ORD-21']) {
			expect(await claimRow(id)).toMatchObject({ status: 'failed' });
			expect(await openLetters(id)).toMatchObject([
				{
					status: 'new',
					error_class: 'execution',
					error_message: 'ERP refused the order: 422 amount must be positive',
					step: 'Post to ERP',
					execution_id: run.executionId,
					payload: { order: id, amount: 40 },
				},
			]);
		}
		// No workflow runs after it to alert them: Recover takes their alerts, once.
		const due = (await takeDueAlerts(store, 500)).filter((l) =>
			['event:orders:ORD-20', 'event:orders:ORD-21'].includes(l.idempotency_key ?? ''),
		);
		expect(due).toHaveLength(2);
		const late = await failExecution(store, { executionId: run.executionId, crashed: false });
		expect(late).toMatchObject({ repeated: true, items: [] });
		expect(await openLetters('ORD-20')).toHaveLength(1);
		// A redelivery that completes the item closes its letter.
		const again = context();
		expect((await claimEvents(store, again, [order('ORD-20')]))[0].outcome).toBe('new');
		await settleExecutionClaims(store, again.executionId, { status: ExecutionEnd.success });
		expect(await openLetters('ORD-20')).toEqual([]);
	});

	it('an execution an error workflow settled first (an Error Trigger in the workflow itself) is left to it: the hook parks nothing', async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-22')]);
		const settled = await failExecution(store, {
			executionId: run.executionId,
			crashed: false,
			message: 'ERP refused the order',
		});
		expect(settled.items).toHaveLength(1);
		const { parked } = await failExecutionInProcess(store, {
			executionId: run.executionId,
			step: 'Post to ERP',
			reason: 'ERP refused the order',
		});
		expect(parked).toEqual([]);
		expect(await openLetters('ORD-22')).toEqual([]);
	});
});

describe('the Idempotent HTTP Write stops when its execution is cancelled', () => {
	/**
	 * The backoff is full jitter over 5 s: with a random draw it fell under the 50 ms before the
	 * stop about once in a hundred runs and sent the retry first. Pinned near its top, the stop
	 * always lands in the backoff, which it ends at once.
	 */
	const nearTheTop = () => 0.99;
	let server: Server;
	let url: string;
	const received: string[] = [];
	const cancel = new AbortController();
	beforeAll(async () => {
		server = createServer((req, res) => {
			received.push(String(req.headers['idempotency-key']));
			// The target fails the first attempt; while the write backs off, the execution is stopped.
			setTimeout(() => cancel.abort(), 50);
			res.writeHead(503).end('{"error":"busy"}');
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
	});
	afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

	it('sends nothing more after the cancel signal; the key ends failed as stopped, its item parked', async () => {
		const started = Date.now();
		const [outcome] = await runWrites(
			store,
			writeContext({
				workflowId: 'wf-orders',
				executionId: 'exec-stopped-write',
				node: 'Post to ERP',
				policy: { ...DEFAULT_POLICY, maxAttempts: 6, baseDelayMs: 5_000, maxDelayMs: 5_000 },
				concurrency: 1,
				maxSavedBodyChars: 1000,
			}),
			[writeRequest({ scope: 'erp', key: 'ORD-9:post', url, body: { order: 'ORD-9' } })],
			{
				send: fetchSender(url, () => ({ order: 'ORD-9' })),
				signal: cancel.signal,
				random: nearTheTop,
			},
		);
		expect(received).toEqual(['ORD-9:post']);
		expect(Date.now() - started).toBeLessThan(4_000);
		expect(outcome.failure).toMatchObject({ class: 'stopped' });
		const [key] = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".idempotency_keys WHERE key = 'ORD-9:post'`,
		);
		expect(key.status).toBe('failed');
		const [letter] = await getDeadLettersByKey(store, ['ORD-9:post']);
		expect(letter).toMatchObject({ status: 'new', error_class: 'stopped' });
	});

	/** A write that routes its failures only, stopped after its first attempt, as above. */
	const routeOnly = async (key: string, parkIfStopped: boolean) => {
		const stop = new AbortController();
		const stopSoon = () => setTimeout(() => stop.abort(), 50);
		const [outcome] = await runWrites(
			store,
			writeContext({
				workflowId: 'wf-orders',
				executionId: `exec-${key}`,
				node: 'Post to ERP',
				policy: { ...DEFAULT_POLICY, maxAttempts: 6, baseDelayMs: 5_000, maxDelayMs: 5_000 },
				concurrency: 1,
				maxSavedBodyChars: 1000,
				park: false,
				parkIfStopped,
			}),
			[writeRequest({ scope: 'erp', key, url, body: { order: key } })],
			{
				send: async (request) => {
					stopSoon();
					return await fetchSender(url, () => ({ order: key }))(request);
				},
				signal: stop.signal,
				random: nearTheTop,
			},
		);
		return outcome;
	};

	it('a route-only write stopped mid-run parks its failed item: no output of a stopped node runs', async () => {
		const outcome = await routeOnly('ORD-10:post', true);
		expect(outcome.failure).toMatchObject({ class: 'stopped' });
		const letters = await getDeadLettersByKey(store, ['ORD-10:post']);
		expect(letters).toMatchObject([{ status: 'new', error_class: 'stopped' }]);
	});

	it("a stopped write's letters have their alert due: the Alert after its Failed output never runs", async () => {
		await routeOnly('ORD-14:post', true);
		const due = (await takeDueAlerts(store, 500)).filter(
			(l) => l.idempotency_key === 'ORD-14:post',
		);
		expect(due).toMatchObject([{ status: 'new', error_class: 'stopped', step: 'Post to ERP' }]);
	});

	it("with the item in an inbox, one alert: the stopped item's, not also the write's", async () => {
		const run = context('exec-ORD-15:post');
		await claimEvents(store, run, [order('ORD-15')]);
		await routeOnly('ORD-15:post', true);
		await stopExecution(store, { executionId: run.executionId, step: 'Post to ERP' });
		const due = (await takeDueAlerts(store, 500)).filter((l) =>
			['ORD-15:post', 'event:orders:ORD-15'].includes(l.idempotency_key ?? ''),
		);
		expect(due.map((l) => l.idempotency_key)).toEqual(['event:orders:ORD-15']);
	});

	it('still one alert when the hook ends the claims before the write finishes (n8n runs both at once)', async () => {
		const run = context('exec-ORD-16:post');
		await claimEvents(store, run, [order('ORD-16')]);
		await stopExecution(store, { executionId: run.executionId, step: 'Post to ERP' });
		await routeOnly('ORD-16:post', true);
		const due = (await takeDueAlerts(store, 500)).filter((l) =>
			['ORD-16:post', 'event:orders:ORD-16'].includes(l.idempotency_key ?? ''),
		);
		expect(due.map((l) => l.idempotency_key)).toEqual(['event:orders:ORD-16']);
	});

	it('one whose caller retries its items itself (the Outbox relay) leaves them to it', async () => {
		const outcome = await routeOnly('ORD-11:post', false);
		expect(outcome.failure).toMatchObject({ class: 'stopped' });
		expect(await getDeadLettersByKey(store, ['ORD-11:post'])).toEqual([]);
	});
});

describe('retention covers every state of a claim', () => {
	it('a failed claim past retention is purged once a letter holds its item; one nothing holds, or inside retention, stays', async () => {
		const run = context();
		await claimEvents(store, run, [order('ORD-10'), { ...order('ORD-11'), index: 1 }]);
		await settleExecutionClaims(store, run.executionId, { status: ExecutionEnd.error });
		await adminQuery(
			`UPDATE "${schema}".processed_events SET expires_at = now() - interval '1 day' WHERE event_id = 'ORD-10'`,
		);
		// Nothing holds the item yet: the claim is its only copy.
		await purgeExpired(store);
		expect(await claimRow('ORD-10')).toMatchObject({ status: 'failed' });
		await parkUnsettledClaims(store, { limit: 10, graceSeconds: 0 });
		expect(await openLetters('ORD-10')).toHaveLength(1);
		await purgeExpired(store);
		expect(await claimRow('ORD-10')).toBeUndefined();
		expect(await claimRow('ORD-11')).toMatchObject({ status: 'failed' });
	});
});

describe('a run that only routes its failures (the Outbox relay)', () => {
	let server: Server;
	let url: string;
	const effects: string[] = [];
	beforeAll(async () => {
		server = createServer((req, res) => {
			effects.push(String(req.headers['idempotency-key']));
			res.writeHead(201).end('{"ok":true}');
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`;
	});
	afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

	const relay = (park: boolean, key: string) =>
		runWrites(
			store,
			writeContext({
				workflowId: 'wf-relay',
				executionId: `exec-relay-${++n}`,
				node: 'Send Message',
				integration: 'crm-relay',
				policy: { ...DEFAULT_POLICY, maxAttempts: 1 },
				concurrency: 1,
				maxSavedBodyChars: 1000,
				park,
			}),
			[writeRequest({ scope: 'crm-relay', key, url, body: { key } })],
			{ send: fetchSender(url, () => ({ key })) },
		);

	it('parks no held item: its caller retries it, and no letter replays what it delivers', async () => {
		await pause(store, 'integration', 'crm-relay', 'maria', 'supplier outage');
		const [held] = await relay(false, 'MSG-1');
		expect(held.failure).toMatchObject({ class: 'paused' });
		expect(await getDeadLettersByKey(store, ['MSG-1'])).toEqual([]);
		await resume(store, 'integration', 'crm-relay', 'maria', 'outage over');
		const [sent] = await relay(false, 'MSG-1');
		expect(sent.ok).toBe(true);
		expect(effects).toEqual(['MSG-1']);
		expect(await getDeadLettersByKey(store, ['MSG-1'])).toEqual([]);
	});

	it('a success closes its letter even when it was asked to be replayed', async () => {
		await pause(store, 'integration', 'crm-relay', 'maria', 'supplier outage');
		await relay(true, 'MSG-2');
		const [letter] = await getDeadLettersByKey(store, ['MSG-2']);
		expect(letter.status).toBe('held');
		// The resume asks for a replay; the sender's redelivery gets there first.
		await resume(store, 'integration', 'crm-relay', 'maria', 'outage over');
		expect((await getDeadLettersByKey(store, ['MSG-2']))[0].status).toBe('replay_requested');
		expect((await relay(true, 'MSG-2'))[0].ok).toBe(true);
		expect((await getDeadLettersByKey(store, ['MSG-2']))[0].status).toBe('replayed');
	});
});
