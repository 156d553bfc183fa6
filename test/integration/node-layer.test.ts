import {
	ExpressionError,
	type IExecuteFunctions,
	type INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import { closeAllStores } from '../../lib/store';
import { execute as claim } from '../../nodes/EventDedupe/actions/claim.operation';
import { execute as recover } from '../../nodes/EventDedupe/actions/recover.operation';
import {
	claimEvents,
	ClaimMode,
	failExecution,
	keeperFor,
	settleExecutionEnd,
	takeCrashed,
} from '../../lib/dedupe';
import { router as deadLetterPark } from '../../nodes/DeadLetterPark/actions/router';
import { router as eventDedupe } from '../../nodes/EventDedupe/actions/router';
import { execute as takeMessages } from '../../nodes/TransactionalOutbox/actions/take.operation';
import { execute as purgeMessages } from '../../nodes/TransactionalOutbox/actions/purge.operation';
import { router as reliabilityControl } from '../../nodes/ReliabilityControl/actions/router';
import { adminQuery, credentialData, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';
import { executeFunctions, type ExecuteFunctionsOptions } from '../helpers/executeFunctions';

/**
 * The node layer with a stand-in for n8n's IExecuteFunctions (parameters, items, Continue On
 * Fail), on the real store: what reaches the outputs and the rows.
 */
const { store, schema, cleanup } = testStore('nodes');
afterAll(cleanup);

const context = (
	parameters: Record<string, unknown>,
	items: INodeExecutionData[],
	options: ExecuteFunctionsOptions = {},
): IExecuteFunctions =>
	executeFunctions({
		name: 'Event Dedupe',
		type: 'n8n-nodes-reliability.eventDedupe',
		workflow: { id: 'wf-node', name: 'Node layer' },
		executionId: 'exec-node',
		credentials: () => credentialData(schema),
		...options,
		parameters,
		items,
	});

describe('Event Dedupe Claim', () => {
	const items: INodeExecutionData[] = [
		{ json: { id: 'evt-a' } },
		{ json: { id: { nested: true } } },
		{ json: { other: 1 } },
		{ json: { id: 'evt-a' } },
	];

	it('with Continue On Fail, items without a usable event ID go to Invalid with the reason, never to New', async () => {
		const outputs = await claim.call(
			context({ operation: 'claim', eventId: '={{ $json.id }}', consumer: 'node-layer' }, items, {
				continueOnFail: true,
			}),
			store,
			items,
		);
		const [fresh, duplicates, invalid] = outputs;
		expect(outputs).toHaveLength(3);
		expect(fresh.map((i) => i.json.id)).toEqual(['evt-a']);
		expect(duplicates.map((i) => i.pairedItem)).toEqual([{ item: 3 }]);
		expect(invalid.map((i) => [i.pairedItem, i.json.error])).toEqual([
			[{ item: 1 }, 'Item 1 has an event ID that is an object, not text or a number'],
			[{ item: 2 }, 'Item 2 has no event ID'],
		]);
		const rows = await adminQuery<{ event_id: string }>(
			`SELECT event_id FROM "${schema}".processed_events WHERE consumer = 'node-layer'`,
		);
		expect(rows).toEqual([{ event_id: 'evt-a' }]);
	});

	it('without it, the first bad item fails the run with its index and nothing is claimed', async () => {
		const bad: INodeExecutionData[] = [{ json: { id: 'evt-b' } }, { json: { id: [] } }];
		await expect(
			claim.call(
				context({ operation: 'claim', eventId: '={{ $json.id }}', consumer: 'node-layer-2' }, bad),
				store,
				bad,
			),
		).rejects.toMatchObject({
			message: 'Item 1 has an event ID that is a list, not text or a number',
			context: { itemIndex: 1 },
		});
		expect(
			await adminQuery(
				`SELECT 1 FROM "${schema}".processed_events WHERE consumer = 'node-layer-2'`,
			),
		).toEqual([]);
	});

	it('refuses a retention that is not a whole number of days from 1, naming the parameter', async () => {
		await expect(
			claim.call(
				context({ operation: 'claim', eventId: '={{ $json.id }}', retentionDays: 0.5 }, items),
				store,
				items,
			),
		).rejects.toThrow('Retention (Days) must be a whole number from 1 to 3650, got 0.5');
	});
});

describe('Event Dedupe Complete and Release', () => {
	afterAll(closeAllStores);

	const claimed = async (consumer: string, executionId: string, eventIds: string[]) =>
		await claimEvents(
			store,
			{
				consumer,
				workflowId: 'wf-node',
				executionId,
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 60,
				retentionDays: 30,
			},
			eventIds.map((eventId, index) => ({ index, eventId })),
		);
	const statusOf = async (consumer: string) =>
		await adminQuery<{ event_id: string; status: string }>(
			`SELECT event_id, status FROM "${schema}".processed_events WHERE consumer = $1 ORDER BY event_id`,
			[consumer],
		);
	const items: INodeExecutionData[] = [
		{ json: { id: 'evt-1' } },
		{ json: { id: { nested: true } } },
		{ json: { id: 'evt-2' } },
	];

	it('Complete with Continue On Fail: an item without a usable event ID is its error item, the others are completed', async () => {
		await claimed('node-complete', 'exec-node', ['evt-1', 'evt-2']);
		const parameters = {
			operation: 'complete',
			eventId: '={{ $json.id }}',
			consumer: 'node-complete',
		};
		const [out] = await eventDedupe.call(context(parameters, items, { continueOnFail: true }));
		expect(out).toEqual([
			{
				json: { id: 'evt-1', _dedupe: { eventId: 'evt-1', completed: true } },
				pairedItem: { item: 0 },
			},
			{
				json: {
					error: 'Item 1 has an event ID that is an object, not text or a number',
					description: 'Set Event ID to the same expression the Claim step uses.',
					itemIndex: 1,
				},
				pairedItem: { item: 1 },
			},
			{
				json: { id: 'evt-2', _dedupe: { eventId: 'evt-2', completed: true } },
				pairedItem: { item: 2 },
			},
		]);
	});

	it('Complete without it: the bad item fails the run with its index and nothing is completed', async () => {
		await claimed('node-complete-2', 'exec-node', ['evt-1', 'evt-2']);
		const before = await statusOf('node-complete-2');
		const parameters = {
			operation: 'complete',
			eventId: '={{ $json.id }}',
			consumer: 'node-complete-2',
		};
		await expect(eventDedupe.call(context(parameters, items))).rejects.toMatchObject({
			message: 'Item 1 has an event ID that is an object, not text or a number',
			context: { itemIndex: 1 },
		});
		expect(await statusOf('node-complete-2')).toEqual(before);
	});

	it('Release by event with Continue On Fail: an item without a usable event ID is its error item, the others are released', async () => {
		await claimed('node-release', 'exec-node', ['evt-1', 'evt-2']);
		const parameters = {
			operation: 'release',
			releaseBy: 'event',
			releaseEventId: '={{ $json.id }}',
			heldByExecution: 'exec-node',
			consumer: 'node-release',
		};
		const [out] = await eventDedupe.call(context(parameters, items, { continueOnFail: true }));
		expect(out.map((item) => [item.pairedItem, item.json._dedupe ?? item.json.error])).toEqual([
			[{ item: 0 }, { eventId: 'evt-1', released: true }],
			[{ item: 1 }, 'Item 1 has an event ID that is an object, not text or a number'],
			[{ item: 2 }, { eventId: 'evt-2', released: true }],
		]);
		expect(await statusOf('node-release')).toEqual([]);
	});

	it('Release by execution with Continue On Fail: an item without an execution ID is its error item', async () => {
		await claimed('node-release-2', 'exec-release', ['evt-1', 'evt-2']);
		const byExecution: INodeExecutionData[] = [
			{ json: { execution: { id: 'exec-release' } } },
			{ json: {} },
		];
		const parameters = {
			operation: 'release',
			releaseBy: 'execution',
			executionId: '={{ $json.execution.id }}',
		};
		const [out] = await eventDedupe.call(
			context(parameters, byExecution, { continueOnFail: true }),
		);
		expect(out).toEqual([
			{
				json: {
					execution: { id: 'exec-release' },
					_dedupe: { executionId: 'exec-release', released: 2 },
				},
				pairedItem: { item: 0 },
			},
			{
				json: {
					error: 'Item 1 has no execution ID',
					description:
						'Set Execution ID; in an Error Trigger workflow use {{ $json.execution.id }}.',
					itemIndex: 1,
				},
				pairedItem: { item: 1 },
			},
		]);
		await expect(eventDedupe.call(context(parameters, byExecution))).rejects.toMatchObject({
			message: 'Item 1 has no execution ID',
			context: { itemIndex: 1 },
		});
	});
});

describe('Event Dedupe Recover', () => {
	it('an item given up is parked, and its alert names the event, why, what happened and the impact', async () => {
		await claimEvents(
			store,
			{
				consumer: 'node-recover',
				workflowId: 'wf-node',
				executionId: 'exec-died',
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 60,
				retentionDays: 30,
			},
			[{ index: 0, eventId: 'INV-77', payload: { invoice: 'INV-77' } }],
		);
		await failExecution(store, { executionId: 'exec-died', crashed: true });
		// Three recoveries ran before and died too.
		await adminQuery(
			`UPDATE "${schema}".processed_events SET recover_attempts = 3 WHERE consumer = 'node-recover'`,
		);
		const [rerun, parked] = await recover.call(
			context({ operation: 'recover', maxRecoveries: 3 }, [{ json: {} }], {
				executionId: 'exec-recover',
				instanceBaseUrl: 'https://n8n.example/',
			}),
			store,
		);
		expect(rerun).toEqual([]);
		expect(parked).toHaveLength(1);
		const [letter] = await adminQuery<{ id: string; error_class: string }>(
			`SELECT id::text, error_class FROM "${schema}".dead_letters WHERE idempotency_key = 'event:node-recover:INV-77'`,
		);
		expect(letter).toEqual({ id: parked[0].json.deadLetterId, error_class: 'crashed' });
		const [alerts] = await reliabilityControl.call(
			context({ resource: 'alert', operation: 'compose' }, parked),
		);
		expect(String(alerts[0].json.text).split('\n')).toEqual([
			'wf-node: the event was received but its work did not finish (event:node-recover:INV-77)',
			'Why: given up after 3 recoveries (event INV-77 of node-recover)',
			'Already happened: no write step had started',
			'Run: https://n8n.example/workflow/wf-node/executions/exec-died',
			`Dead letter: ${letter.id}`,
			'Next action (the workflow owner): Fix the cause (given up after 3 recoveries (event INV-77 of node-recover)), then set the record to replay_requested',
		]);
	});
});

describe('Event Dedupe Recover holds what it takes only while it runs', () => {
	const crashedItem = async (eventId: string) => {
		const died = `exec-died-${eventId}`;
		await claimEvents(
			store,
			{
				consumer: 'node-hold',
				workflowId: 'wf-node',
				executionId: died,
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 60,
				retentionDays: 30,
			},
			[{ index: 0, eventId, payload: { invoice: eventId } }],
		);
		await failExecution(store, { executionId: died, crashed: true });
	};
	const claimOf = async (eventId: string) =>
		(
			await adminQuery<{ execution_id: string | null; status: string; held_for: number }>(
				`SELECT execution_id, status, extract(epoch FROM lease_until - now())::int AS held_for
				 FROM "${schema}".processed_events WHERE consumer = 'node-hold' AND event_id = $1`,
				[eventId],
			)
		)[0];
	/** A Recover run whose re-run is `rerun`; n8n's end-of-execution handlers run when asked. */
	const recoverRun = (executionId: string, rerun: () => Promise<unknown>) => {
		const handlers: Array<(run: { status: string }) => Promise<void>> = [];
		const run = recover.call(
			{
				...context(
					{
						operation: 'recover',
						maxRecoveries: 3,
						recoverHoldSeconds: 600,
						recoverWorkflowId: 'wf-node',
					},
					[{ json: {} }],
					{ executionId, instanceBaseUrl: 'https://n8n.example/' },
				),
				executeWorkflow: async () => ({ executionId: `${executionId}-sub`, data: await rerun() }),
				additionalData: {
					hooks: {
						addHandler: (_hook: string, handler: (typeof handlers)[number]) =>
							handlers.push(handler),
					},
				},
			} as unknown as IExecuteFunctions,
			store,
		);
		return {
			run,
			end: async (status: string) => {
				for (const h of handlers) await h({ status });
			},
		};
	};

	it('a run that died with n8n leaves its items for a lease, not for Hold For; a live run renews them', async () => {
		await crashedItem('INV-H1');
		let during: Awaited<ReturnType<typeof claimOf>> | undefined;
		let renewed: Awaited<ReturnType<typeof claimOf>> | undefined;
		const { run, end } = recoverRun('exec-recover-h1', async () => {
			during = await claimOf('INV-H1');
			await keeperFor(store, 60).beat();
			renewed = await claimOf('INV-H1');
			return [];
		});
		await run;
		await end('success');
		// Held by the run for about a minute at a time, not the 600 s of Hold For: had n8n died
		// with the run, the next run would have taken it within a minute.
		expect(during).toMatchObject({ execution_id: 'exec-recover-h1', status: 'in_progress' });
		expect(during!.held_for).toBeLessThanOrEqual(60);
		expect(renewed!.held_for).toBeGreaterThan(50);
		expect(await claimOf('INV-H1')).toMatchObject({ status: 'done' });
	});

	it("an item whose re-run failed goes back to Recover at once: the run's keeper no longer renews it", async () => {
		await crashedItem('INV-H2');
		const { run, end } = recoverRun('exec-recover-h2', async () => {
			throw new Error('the CRM is down');
		});
		const [rerun] = await run;
		expect(rerun[0].json).toMatchObject({ outcome: 'failed', error: 'the CRM is down' });
		await keeperFor(store, 60).beat();
		expect(await claimOf('INV-H2')).toMatchObject({ execution_id: null, status: 'in_progress' });
		expect((await claimOf('INV-H2')).held_for).toBeLessThanOrEqual(0);
		const [again] = await takeCrashed(store, {
			executionId: 'exec-recover-h2b',
			limit: 5,
			maxAttempts: 3,
			leaseSeconds: 60,
			workflowId: 'wf-node',
		});
		expect(again).toMatchObject({ eventId: 'INV-H2', attempt: 2, givenUp: false });
		await end('success');
	});
});

describe('Event Dedupe Recover asks n8n how an execution that waited stands', () => {
	/** An item whose execution waits (a Wait n8n offloaded), its hold run out. */
	const waiting = async (eventId: string) => {
		const executionId = `exec-wait-${eventId}`;
		await claimEvents(
			store,
			{
				consumer: 'node-wait',
				workflowId: 'wf-node',
				executionId,
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 60,
				retentionDays: 30,
			},
			[{ index: 0, eventId, payload: { order: eventId } }],
		);
		await settleExecutionEnd(store, {
			executionId,
			status: 'waiting',
			waitTill: new Date(Date.now() + 3600_000),
		});
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second', ask_at = now() - interval '1 second' WHERE event_id = $1`,
			[eventId],
		);
		return executionId;
	};
	const recoverWith = (getExecutionDataById: (id: string) => Promise<unknown>) =>
		recover.call(
			{
				...context(
					{ operation: 'recover', maxRecoveries: 3, recoverWorkflowId: 'wf-node' },
					[{ json: {} }],
					{ executionId: 'exec-recover-wait', instanceBaseUrl: 'https://n8n.example/' },
				),
				getExecutionDataById,
			} as unknown as IExecuteFunctions,
			store,
		);
	const claimOf = async (eventId: string) =>
		(
			await adminQuery<{ status: string; held_for: number }>(
				`SELECT status, extract(epoch FROM ask_at - now())::int AS held_for
				 FROM "${schema}".processed_events WHERE consumer = 'node-wait' AND event_id = $1`,
				[eventId],
			)
		)[0];

	it('one a person stopped while it waited (its record keeps the wait beside the cancel) is parked as stopped', async () => {
		const stopped = await waiting('W-STOP');
		await recoverWith(async (id) =>
			id === stopped
				? {
						waitTill: new Date(Date.now() + 3600_000).toISOString(),
						resultData: {
							runData: {},
							lastNodeExecuted: 'Wait for Stock',
							error: {
								name: 'ManualExecutionCancelledError',
								message: 'The execution was cancelled manually',
							},
						},
					}
				: undefined,
		);
		expect(await claimOf('W-STOP')).toMatchObject({ status: 'failed' });
		const [letter] = await adminQuery<{ error_class: string; step: string; status: string }>(
			`SELECT error_class, step, status FROM "${schema}".dead_letters WHERE idempotency_key = 'event:node-wait:W-STOP'`,
		);
		expect(letter).toMatchObject({ error_class: 'stopped', step: 'Wait for Stock', status: 'new' });
	});

	it('one n8n cannot read now is held and asked again later, not ahead of the others', async () => {
		const unreadable = await waiting('W-UNREADABLE');
		await recoverWith(async (id) => {
			if (id === unreadable) throw new Error('could not parse the execution data');
			return undefined;
		});
		const claim = await claimOf('W-UNREADABLE');
		expect(claim.status).toBe('in_progress');
		expect(claim.held_for).toBeGreaterThan(0);
		expect(claim.held_for).toBeLessThanOrEqual(600);
	});
});

describe('Transactional Outbox parameters', () => {
	it('a number out of its range is refused naming the parameter and its range, before anything is taken or purged', async () => {
		const items: INodeExecutionData[] = [{ json: {} }];
		await expect(
			takeMessages.call(context({ operation: 'take', maxMessages: 0 }, items), store, items),
		).rejects.toThrow('Max Messages must be a whole number from 1 to 10000, got 0');
		await expect(
			takeMessages.call(context({ operation: 'take', leaseSeconds: 'soon' }, items), store, items),
		).rejects.toThrow('Lease (Seconds) must be');
		await expect(
			purgeMessages.call(context({ operation: 'purge', retentionDays: 0.5 }, items), store, items),
		).rejects.toThrow('Retention (Days) must be a whole number from 1 to 3650, got 0.5');
	});
});

describe('Reliability Control', () => {
	afterAll(closeAllStores);

	it('an engine error from an operation reaches n8n as a NodeOperationError with its message and hint', async () => {
		const items: INodeExecutionData[] = [{ json: {} }];
		const parameters = {
			resource: 'heartbeat',
			operation: 'beat',
			heartbeatName: ' ',
			schedule: 'period',
			periodMinutes: 60,
			graceMinutes: 10,
		};
		const failed = reliabilityControl.call(context(parameters, items));
		await expect(failed).rejects.toBeInstanceOf(NodeOperationError);
		await expect(failed).rejects.toMatchObject({
			message: 'A heartbeat needs a name',
			description: 'Name it after the scheduled workflow, for example "nightly invoice import".',
		});
		expect(await adminQuery(`SELECT 1 FROM "${schema}".heartbeats`)).toEqual([]);
	});

	it('Console Serve with Continue On Fail: a request that is not an object is its error item, the others are served', async () => {
		const requests: unknown[] = [{ headers: {}, query: {} }, 'not a request', { headers: {} }];
		const items: INodeExecutionData[] = requests.map((_, n) => ({ json: { n } }));
		const parameters: Record<string, unknown> = { resource: 'console', operation: 'serve' };
		const parameter = (name: string, index: number, fallback?: unknown) =>
			name === 'request' ? requests[index] : (parameters[name] ?? fallback);
		const [served] = await reliabilityControl.call(
			context(parameters, items, { continueOnFail: true, parameter }),
		);
		expect(served.map((item) => [item.pairedItem, item.json.statusCode ?? item.json])).toEqual([
			[{ item: 0 }, 200],
			[
				{ item: 1 },
				{
					error: 'Item 1: the request is not an object',
					description:
						"Set Request to the Webhook node's item, e.g. {{ $json }} (it has headers, query and body).",
					itemIndex: 1,
				},
			],
			[{ item: 2 }, 200],
		]);
		const failed = reliabilityControl.call(context(parameters, items, { parameter }));
		await expect(failed).rejects.toBeInstanceOf(NodeOperationError);
		await expect(failed).rejects.toMatchObject({
			message: 'Item 1: the request is not an object',
			context: { itemIndex: 1 },
		});
	});

	it('composes an alert without the store credential', async () => {
		const items: INodeExecutionData[] = [
			{ json: { workflowName: 'Billing', workflowId: 'wf2', key: 'inv-1', message: 'HTTP 429' } },
		];
		const getCredentials = jest.fn();
		const [alerts] = await reliabilityControl.call({
			...context({ resource: 'alert', operation: 'compose' }, items),
			getCredentials,
		} as IExecuteFunctions);
		expect(alerts.map((a) => [a.json.dedupKey, a.pairedItem])).toEqual([
			['n8n-reliability:wf2:inv-1', { item: 0 }],
		]);
		expect(getCredentials).not.toHaveBeenCalled();
	});
});

describe('Dead Letter Park', () => {
	afterAll(closeAllStores);

	it('with Continue On Fail, a refused item is the same error item as in every node, and the others go through', async () => {
		const [parked] = await parkAll(store, [
			{
				workflowId: 'wf-node',
				executionId: 'exec-node',
				step: 'Post',
				itemIndex: 0,
				idempotencyKey: 'node-layer-letter',
				errorClass: 'permanent',
				errorMessage: 'HTTP 422',
				payload: { n: 1 },
				retentionDays: 90,
			},
		]);
		const items: INodeExecutionData[] = [
			{ json: { id: parked.id } },
			{ json: { id: '999999999' } },
		];
		const parameters = {
			operation: 'updateStatus',
			targetId: '={{ $json.id }}',
			newStatus: 'resolved',
			actor: 'ops',
			reason: 'fixed in the CRM',
		};
		const [changed] = await deadLetterPark.call(
			context(parameters, items, { continueOnFail: true }),
		);
		expect(changed[0].json).toMatchObject({ id: parked.id, to: 'resolved' });
		expect(changed[1]).toEqual({
			json: {
				error: expect.stringMatching(/999999999/),
				description: 'Check the ID (Get or List shows the IDs that exist).',
				itemIndex: 1,
			},
			pairedItem: { item: 1 },
		});
		const [got] = await deadLetterPark.call(
			context({ operation: 'get', findBy: 'id', deadLetterId: '={{ $json.id }}' }, items, {
				continueOnFail: true,
			}),
		);
		expect(got[0].json).toMatchObject({ id: parked.id, status: 'resolved' });
		expect(got[1]).toEqual({
			json: {
				error: 'Item 1: no dead letter with dead letter ID "999999999"',
				description: 'List shows the records that exist; purged records are gone.',
				itemIndex: 1,
			},
			pairedItem: { item: 1 },
		});
		const rows = await adminQuery<{ status: string }>(
			`SELECT status FROM "${schema}".dead_letters WHERE idempotency_key = 'node-layer-letter'`,
		);
		expect(rows).toEqual([{ status: 'resolved' }]);
	});

	it('Get with Continue On Fail: an ID that is not a number is its error item, the others are found', async () => {
		const [parked] = await parkAll(store, [
			{
				workflowId: 'wf-node',
				executionId: 'exec-node',
				step: 'Post',
				itemIndex: 0,
				idempotencyKey: 'node-layer-get',
				errorClass: 'permanent',
				errorMessage: 'HTTP 422',
				payload: { n: 2 },
				retentionDays: 90,
			},
		]);
		const items: INodeExecutionData[] = [
			{ json: { id: 'abc' } },
			{ json: { id: parked.id } },
			{ json: {} },
			// Leading zeros name the same record.
			{ json: { id: `00${parked.id}` } },
		];
		const parameters = { operation: 'get', findBy: 'id', deadLetterId: '={{ $json.id }}' };
		const [got] = await deadLetterPark.call(context(parameters, items, { continueOnFail: true }));
		expect(got).toEqual([
			{
				json: {
					error: 'Item 0: dead letter ID "abc" is not a number',
					description: 'Dead letter IDs are the numbers Park and List output as id.',
					itemIndex: 0,
				},
				pairedItem: { item: 0 },
			},
			{
				json: expect.objectContaining({ id: parked.id, idempotencyKey: 'node-layer-get' }),
				pairedItem: { item: 1 },
			},
			{
				json: {
					error: 'Item 2 has no dead letter ID',
					description: 'Set Dead Letter ID to the record to get.',
					itemIndex: 2,
				},
				pairedItem: { item: 2 },
			},
			{
				json: expect.objectContaining({ id: parked.id, idempotencyKey: 'node-layer-get' }),
				pairedItem: { item: 3 },
			},
		]);
	});

	it('Get without Continue On Fail: an ID that is not a number fails the run with its item and what to fix', async () => {
		const items: INodeExecutionData[] = [{ json: { id: '1' } }, { json: { id: 'abc' } }];
		const parameters = { operation: 'get', findBy: 'id', deadLetterId: '={{ $json.id }}' };
		const failed = deadLetterPark.call(context(parameters, items));
		await expect(failed).rejects.toBeInstanceOf(NodeOperationError);
		await expect(failed).rejects.toMatchObject({
			message: 'Item 1: dead letter ID "abc" is not a number',
			description: 'Dead letter IDs are the numbers Park and List output as id.',
			context: { itemIndex: 1 },
		});
	});

	it("Take for Replay: an engine error reaches n8n as a NodeOperationError, n8n's own error as it is", async () => {
		const items: INodeExecutionData[] = [{ json: {} }];
		const refused = deadLetterPark.call(
			context({ operation: 'take', staleAfterMinutes: 0 }, items),
		);
		await expect(refused).rejects.toBeInstanceOf(NodeOperationError);
		await expect(refused).rejects.toThrow(
			'Retake After (Minutes) must be a whole number from 1 to 10080, got 0',
		);
		const expressionError = new ExpressionError('invalid syntax', { itemIndex: 0 });
		const parameters: Record<string, unknown> = { operation: 'take' };
		const parameter = (name: string, _index: number, fallback?: unknown) => {
			if (name === 'takeLimit') throw expressionError;
			return parameters[name] ?? fallback;
		};
		await expect(deadLetterPark.call(context(parameters, items, { parameter }))).rejects.toBe(
			expressionError,
		);
	});

	it('List and Stats: a setting the engine refuses fails the run naming the first item, whose settings they read', async () => {
		const items: INodeExecutionData[] = [{ json: {} }, { json: {} }];
		const list = deadLetterPark.call(context({ operation: 'list', limit: -1 }, items));
		await expect(list).rejects.toBeInstanceOf(NodeOperationError);
		await expect(list).rejects.toMatchObject({
			message: expect.stringMatching(/^Limit must be a whole number from 1 to 10000, got -1/),
			context: { itemIndex: 0 },
		});
		await expect(
			deadLetterPark.call(context({ operation: 'stats', days: 1e10 }, items)),
		).rejects.toMatchObject({
			message: expect.stringMatching(/^Days must be a whole number from 1 to 3650/),
			context: { itemIndex: 0 },
		});
	});
});
