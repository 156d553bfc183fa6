import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bundledWorkflows } from '../../dev/bundled';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { TestTarget } from '../../dev/target/server';
import { connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import {
	getDeadLetters,
	parkedOrThrow,
	parkItems,
	updateDeadLetterStatus,
} from '../../lib/deadletter';
import { Store } from '../../lib/store';
import { adminQuery, storeConfig } from '../helpers/store';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Every item accounted for through n8n's execution lifecycle, in real n8n: an execution stopped
 * through n8n's API, one cancelled by its workflow timeout, and one that fails with an error
 * whose text says "crashed". Each webhook answers on receipt, so the sender never delivers again:
 * the item must end in a letter that names it. A stopped execution sends nothing more. A run
 * whose items no inbox kept, and a trigger that fails (n8n then runs no execution at all), each
 * end in one record with the error that says why.
 */
jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const STOP_FLOW = 'lifecycleStopFlow';
const TIMEOUT_FLOW = 'lifecycleTimeoutFlow';
const CRASH_TEXT_FLOW = 'lifecycleCrashTextFlow';
const NO_HANDLER_FLOW = 'lifecycleNoHandlerFlow';
const LOAD_FLOW = 'lifecycleLoadFlow';
const FEED_FLOW = 'lifecycleFeedFlow';
const SLOW_REPLAY_FLOW = 'lifecycleSlowReplayFlow';

/**
 * An order feed, as an RSS source serves it: an empty channel while it is healthy (n8n polls it
 * once when it activates the workflow), then 500s once the test breaks it.
 */
const brokenFeeds = new Set<string>();
const feedReads = new Map<string, number>();
const feed: Server = createServer((request, response) => {
	const path = request.url ?? '/';
	if (brokenFeeds.has(path)) {
		response.writeHead(500, { 'content-type': 'text/plain' }).end('feed store unavailable');
		return;
	}
	feedReads.set(path, (feedReads.get(path) ?? 0) + 1);
	response
		.writeHead(200, { 'content-type': 'application/rss+xml' })
		.end(
			'<?xml version="1.0"?><rss version="2.0"><channel><title>Orders</title><link>http://orders.example</link><description>New orders</description></channel></rss>',
		);
});
beforeAll(() => new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve)));
afterAll(() => new Promise<void>((resolve) => feed.close(() => resolve())));
const feedPath = (version: string) => `/${version}/orders.rss`;
const feedUrl = (version: string) =>
	`http://127.0.0.1:${(feed.address() as AddressInfo).port}${feedPath(version)}`;

/** Webhook -> Stop and Error: a run whose items no inbox kept, failing at its load step. */
const loadFlow = () => ({
	...workflow(
		LOAD_FLOW,
		'Lifecycle: a nightly load',
		[
			webhookNode('lifecycle-load'),
			{
				id: 'node-Load',
				name: 'Load',
				type: 'n8n-nodes-base.stopAndError',
				typeVersion: 1,
				position: [260, 0],
				parameters: { errorType: 'errorMessage', errorMessage: 'warehouse refused the load' },
			},
		],
		connect(['Webhook', 'Load']),
	),
	settings: { executionOrder: 'v1', errorWorkflow: 'relErrorHandler1' },
});

/** A workflow whose re-run takes a while (Execute Workflow Trigger -> Wait 30 s): Replay runs it. */
const slowReplayFlow = () =>
	workflow(
		SLOW_REPLAY_FLOW,
		'Lifecycle: a slow re-run',
		[
			{
				id: 'node-ReplayEntry',
				name: 'Replay Entry',
				type: 'n8n-nodes-base.executeWorkflowTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'node-SlowStep',
				name: 'Slow Step',
				type: 'n8n-nodes-base.wait',
				typeVersion: 1.1,
				position: [260, 0],
				webhookId: 'b5f1c0de-5a3c-4d2e-9f1a-7e1d0c3b2a10',
				parameters: { amount: 30, unit: 'seconds' },
			},
		],
		connect(['Replay Entry', 'Slow Step']),
	);

/** RSS Feed Trigger, polled every minute: its failures are the trigger's, with no execution. */
const feedFlow = (version: string) => ({
	...workflow(
		FEED_FLOW,
		'Lifecycle: orders from a feed',
		[
			{
				id: 'node-OrderFeed',
				name: 'Order Feed',
				type: 'n8n-nodes-base.rssFeedReadTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: { pollTimes: { item: [{ mode: 'everyMinute' }] }, feedUrl: feedUrl(version) },
			},
		],
		{},
	),
	settings: { executionOrder: 'v1', errorWorkflow: 'relErrorHandler1' },
});

/** Webhook -> Event Dedupe v2 (kept until the execution ends) -> a write that keeps retrying 503s. */
const retryingFlow = (id: string, path: string, consumer: string, erpUrl: string) =>
	workflow(
		id,
		`Lifecycle: ${path}`,
		[
			webhookNode(path),
			{
				...packageNode('eventDedupe', 'Claim Order', {
					operation: 'claim',
					eventId: '={{ $json.body.order }}',
					consumer,
				}),
				typeVersion: 2,
			},
			packageNode(
				'idempotentHttpWrite',
				'Post to ERP',
				{
					method: 'POST',
					url: erpUrl,
					integration: 'erp',
					keyMode: 'custom',
					customKey: '={{ $json.body.order }}:post',
					jsonBody: '={{ $json.body }}',
					retries: {
						maxAttempts: 10,
						baseDelaySeconds: 2,
						maxDelaySeconds: 2,
						deadlineSeconds: 120,
					},
				},
				[520, 0],
			),
		],
		connect(['Webhook', 'Claim Order'], ['Claim Order', 'Post to ERP']),
	);

/** Webhook -> Event Dedupe v2 -> Stop and Error with a message that says "crashed". */
const crashTextFlow = () => ({
	...workflow(
		CRASH_TEXT_FLOW,
		'Lifecycle: an error that says crashed',
		[
			webhookNode('lifecycle-crash-text'),
			{
				...packageNode('eventDedupe', 'Claim Order', {
					operation: 'claim',
					eventId: '={{ $json.body.order }}',
					consumer: 'crash-text',
				}),
				typeVersion: 2,
			},
			{
				id: 'node-POSystem',
				name: 'PO System',
				type: 'n8n-nodes-base.stopAndError',
				typeVersion: 1,
				position: [520, 0],
				parameters: { errorType: 'errorMessage', errorMessage: 'Upstream service crashed' },
			},
		],
		connect(['Webhook', 'Claim Order'], ['Claim Order', 'PO System']),
	),
	settings: { executionOrder: 'v1', errorWorkflow: 'relErrorHandler1' },
});

/** The same failure in a workflow that names no error workflow: nothing runs after it. */
const noHandlerFlow = () =>
	workflow(
		NO_HANDLER_FLOW,
		'Lifecycle: a failure with no error workflow',
		[
			webhookNode('lifecycle-no-handler'),
			{
				...packageNode('eventDedupe', 'Claim Order', {
					operation: 'claim',
					eventId: '={{ $json.body.order }}',
					consumer: 'no-handler',
				}),
				typeVersion: 2,
			},
			{
				id: 'node-RefuseOrder',
				name: 'Refuse Order',
				type: 'n8n-nodes-base.stopAndError',
				typeVersion: 1,
				position: [520, 0],
				parameters: {
					errorType: 'errorMessage',
					errorMessage: 'ERP refused the order: amount must be positive',
				},
			},
		],
		connect(['Webhook', 'Claim Order'], ['Claim Order', 'Refuse Order']),
	);

describe.each(n8nVersionsUnderTest())('the execution lifecycle in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const erp = `/${version}/lifecycle/erp`;
	const major = Number(version.split('.')[0]);

	beforeAll(async () => {
		target.route(erp, { honoursKey: false });
		target.script(erp, ...Array.from({ length: 200 }, () => ({ status: 503 })));
		const bundled = bundledWorkflows(target.url(`/${version}/lifecycle/demo`)).filter((w) =>
			['relAlertWorkflow', 'relErrorHandler1', 'relRecoverWorkflow', 'relReplayWorkflow'].includes(
				w.id,
			),
		);
		const timeoutFlow = retryingFlow(
			TIMEOUT_FLOW,
			'lifecycle-timeout',
			'timeouts',
			target.url(erp),
		);
		ctx = await startWithPackage(
			version,
			'lifecycle',
			[
				...bundled,
				retryingFlow(STOP_FLOW, 'lifecycle-stop', 'stops', target.url(erp)),
				{ ...timeoutFlow, settings: { executionOrder: 'v1', executionTimeout: 5 } },
				crashTextFlow(),
				noHandlerFlow(),
				loadFlow(),
				feedFlow(version),
				slowReplayFlow(),
			],
			[],
			[
				...(major >= 2 ? ['relAlertWorkflow', 'relErrorHandler1'] : []),
				STOP_FLOW,
				TIMEOUT_FLOW,
				CRASH_TEXT_FLOW,
				NO_HANDLER_FLOW,
				LOAD_FLOW,
				FEED_FLOW,
				SLOW_REPLAY_FLOW,
				'relRecoverWorkflow',
				'relReplayWorkflow',
			],
		);
		// Activated once its first poll read the healthy feed (2.x registers triggers after the
		// publish answered); from its next poll on, the feed fails.
		await waitFor(
			'the first poll of the feed',
			async () => ((feedReads.get(feedPath(version)) ?? 0) > 0 ? true : undefined),
			60_000,
			100,
		);
		brokenFeeds.add(feedPath(version));
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	const sentFor = (order: string) =>
		target.requestsTo(erp).filter((r) => (r.body as { order?: string }).order === order).length;

	const letterOf = async (consumer: string, order: string) =>
		(
			await adminQuery<{
				status: string;
				error_class: string;
				step: string;
				execution_id: string;
				payload: { body?: { order?: string } } | null;
			}>(
				`SELECT status, error_class, step, execution_id, payload FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`,
				[`event:${consumer}:${order}`],
			)
		)[0];

	const claimOf = async (consumer: string, order: string) =>
		(
			await adminQuery<{ status: string }>(
				`SELECT status FROM "${ctx!.schema}".processed_events WHERE consumer = $1 AND event_id = $2`,
				[consumer, order],
			)
		)[0]?.status;

	it("Stop through n8n's API: nothing more is sent, and the item is parked as stopped at the write", async () => {
		const order = `S-${version}`;
		expect((await ctx!.n8n.api.webhook('lifecycle-stop', { order, amount: 40 })).status).toBe(200);
		await waitFor(
			'the first attempt',
			async () => (sentFor(order) >= 1 ? true : undefined),
			60_000,
			50,
		);
		const [running] = await waitFor(
			'the running execution',
			async () => {
				const list = await ctx!.n8n.api.executions(STOP_FLOW);
				const found = list.filter((e) => e.status === 'running');
				return found.length > 0 ? found : undefined;
			},
			30_000,
			100,
		);
		await ctx!.n8n.api.rest('POST', `/executions/${running.id}/stop`);
		const sentAtStop = sentFor(order);
		const letter = await waitFor(
			'the stopped item parked',
			async () => await letterOf('stops', order),
			60_000,
			250,
		);
		expect(letter).toMatchObject({
			status: 'new',
			error_class: 'stopped',
			step: 'Post to ERP',
			execution_id: running.id,
		});
		expect(await claimOf('stops', order)).toBe('failed');
		// One item, one open letter: whatever the write parked of its own is folded into the item's.
		expect(
			await adminQuery(
				`SELECT id FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1 AND is_open`,
				[`${order}:post`],
			),
		).toEqual([]);
		// Well past two backoffs: a stopped execution sent nothing more.
		await new Promise((resolve) => setTimeout(resolve, 6_000));
		expect(sentFor(order)).toBe(sentAtStop);

		// No workflow ran after the stop to alert it: Recover (every minute, or called) sends the
		// alert that was due, once.
		const alertsAbout = () =>
			target.requestsTo(`/${version}/lifecycle/demo/alerts`).filter((r) =>
				String((r.body as { text?: string }).text)
					.split('\n')[0]
					.endsWith(`(event:stops:${order})`),
			);
		await ctx!.n8n.api.webhook('reliability-recover', {});
		await waitFor(
			'the alert about the stopped item',
			async () => (alertsAbout().length > 0 ? true : undefined),
			90_000,
			500,
		);
		await ctx!.n8n.api.webhook('reliability-recover', {});
		await new Promise((resolve) => setTimeout(resolve, 3_000));
		expect(alertsAbout()).toHaveLength(1);
		// One alert per item: the write's own letter of the stopped item is not alerted as well.
		const sink = target.requestsTo(`/${version}/lifecycle/demo/alerts`);
		expect(
			sink.filter((r) => String((r.body as { text?: string }).text).includes(`${order}:post`)),
		).toEqual([]);
		expect(String((alertsAbout()[0].body as { text?: string }).text)).toContain('stopped');
	});

	it('a workflow timeout cancels the execution: the item is parked as stopped, nothing more sent', async () => {
		const order = `T-${version}`;
		expect((await ctx!.n8n.api.webhook('lifecycle-timeout', { order, amount: 40 })).status).toBe(
			200,
		);
		const letter = await waitFor(
			'the timed-out item parked',
			async () => await letterOf('timeouts', order),
			90_000,
			250,
		);
		expect(letter).toMatchObject({ status: 'new', error_class: 'stopped' });
		expect(await claimOf('timeouts', order)).toBe('failed');
		const sentAtPark = sentFor(order);
		await new Promise((resolve) => setTimeout(resolve, 6_000));
		expect(sentFor(order)).toBe(sentAtPark);
	});

	it('an error whose text says "crashed" is parked by the Error handler, not left for Recover', async () => {
		const order = `C-${version}`;
		expect((await ctx!.n8n.api.webhook('lifecycle-crash-text', { order, amount: 40 })).status).toBe(
			200,
		);
		const letter = await waitFor(
			'the failed item parked',
			async () => await letterOf('crash-text', order),
			90_000,
			250,
		);
		expect(letter).toMatchObject({ status: 'new', error_class: 'execution' });
		expect(letter.payload?.body?.order).toBe(order);
		expect(await claimOf('crash-text', order)).toBe('failed');
	});

	it('a failure in a workflow that names no error workflow: its end parks the item with the error, and Recover alerts it', async () => {
		const order = `N-${version}`;
		expect((await ctx!.n8n.api.webhook('lifecycle-no-handler', { order, amount: -5 })).status).toBe(
			200,
		);
		const letter = await waitFor(
			'the failed item parked',
			async () => await letterOf('no-handler', order),
			90_000,
			250,
		);
		expect(letter).toMatchObject({ status: 'new', error_class: 'execution', step: 'Refuse Order' });
		expect(letter.payload?.body?.order).toBe(order);
		expect(await claimOf('no-handler', order)).toBe('failed');
		const alertsAbout = () =>
			target.requestsTo(`/${version}/lifecycle/demo/alerts`).filter((r) =>
				String((r.body as { text?: string }).text)
					.split('\n')[0]
					.endsWith(`(event:no-handler:${order})`),
			);
		await ctx!.n8n.api.webhook('reliability-recover', {});
		await waitFor(
			'the alert about the failed item',
			async () => (alertsAbout().length > 0 ? true : undefined),
			90_000,
			500,
		);
		expect(String((alertsAbout()[0].body as { text?: string }).text)).toContain(
			'ERP refused the order',
		);
	});

	const recordOf = async (key: string) =>
		(
			await adminQuery<{
				status: string;
				error_class: string;
				error_message: string | null;
				step: string;
				workflow_id: string;
				run_link: string | null;
				impact: string | null;
				failure_count: number;
			}>(
				`SELECT status, error_class, error_message, step, workflow_id, run_link, impact, failure_count
				 FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`,
				[key],
			)
		)[0];
	const alertsNaming = (key: string) =>
		target
			.requestsTo(`/${version}/lifecycle/demo/alerts`)
			.filter((r) => String((r.body as { text?: string }).text).includes(key));

	it('a run whose items no inbox kept is parked once, with the error that says why', async () => {
		const before = (await ctx!.n8n.api.executions(LOAD_FLOW)).length;
		expect((await ctx!.n8n.api.webhook('lifecycle-load', { batch: `L-${version}` })).status).toBe(
			200,
		);
		const [failed] = await ctx!.n8n.api.waitForExecutions(LOAD_FLOW, before + 1, 60_000);
		const key = `execution:${failed.id}`;
		const letter = await waitFor(
			'the failed run parked',
			async () => await recordOf(key),
			90_000,
			250,
		);
		expect(letter).toMatchObject({
			status: 'new',
			error_class: 'execution',
			error_message: 'warehouse refused the load',
			step: 'Load',
			workflow_id: LOAD_FLOW,
		});
		expect(letter.run_link).toMatch(new RegExp(`/workflow/${LOAD_FLOW}/executions/${failed.id}$`));
		await waitFor(
			'its alert',
			async () => (alertsNaming(key).length > 0 ? true : undefined),
			60_000,
			500,
		);
		expect(String((alertsNaming(key)[0].body as { text?: string }).text)).toContain(
			'warehouse refused the load',
		);
	});

	it('a failing trigger, which runs no execution, is one record with its error, and alerted', async () => {
		const key = `trigger:${FEED_FLOW}`;
		// n8n polls the feed every minute: the first failed poll comes within a minute of the break.
		const letter = await waitFor(
			'the trigger failure parked',
			async () => await recordOf(key),
			150_000,
			1_000,
		);
		expect(letter).toMatchObject({
			status: 'new',
			workflow_id: FEED_FLOW,
			impact: expect.stringContaining('the trigger failed'),
		});
		// The trigger's own error (the feed's 500), not the handler's fallback or its refusal.
		expect(letter.error_message).toMatch(/500/);
		await waitFor(
			'its alert',
			async () => (alertsNaming(key).length > 0 ? true : undefined),
			60_000,
			500,
		);
		// Nothing keyed on an empty execution ID, whatever failed.
		expect(
			await adminQuery(
				`SELECT id FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'execution:'`,
			),
		).toEqual([]);
	});

	it('a Replay run stopped mid-batch asks again for the records it took, at once', async () => {
		const store = new Store(storeConfig(ctx!.schema));
		try {
			const [letter] = parkedOrThrow(
				await parkItems(store, [
					{
						workflowId: SLOW_REPLAY_FLOW,
						step: 'Slow Step',
						idempotencyKey: `slow-${version}`,
						errorClass: 'exhausted',
						errorMessage: 'the warehouse timed out',
						payload: { order: `R-${version}` },
					},
				]),
			);
			await updateDeadLetterStatus(store, { id: letter.id, to: 'replay_requested', actor: 'ops' });
			// The webhook answers when the run ends: it is not awaited.
			void ctx!.n8n.api.webhook('reliability-replay', {}).catch(() => undefined);
			const statusOf = async () => (await getDeadLetters(store, [letter.id]))[0];
			await waitFor(
				'the record taken',
				async () => ((await statusOf()).status === 'being_fixed' ? true : undefined),
				60_000,
				200,
			);
			const [running] = await waitFor(
				'the running Replay run',
				async () => {
					const list = await ctx!.n8n.api.executions('relReplayWorkflow');
					const found = list.filter((e) => e.status === 'running');
					return found.length > 0 ? found : undefined;
				},
				30_000,
				200,
			);
			await ctx!.n8n.api.rest('POST', `/executions/${running.id}/stop`);
			// Back in replay_requested as the run ends, not 30 minutes later (Retake After).
			const returned = await waitFor(
				'the record asked for again',
				async () => {
					const record = await statusOf();
					const entry = record.history.find(
						(h) => h.fromStatus === 'being_fixed' && h.toStatus === 'replay_requested',
					);
					return entry ? { record, entry } : undefined;
				},
				20_000,
				250,
			);
			expect(returned.entry.reason).toMatch(/the replay run ended canceled before it settled/);
			expect(returned.entry.actor).toContain(`execution ${running.id}`);
		} finally {
			await store.close();
		}
	});

	it('a Recover run stopped mid-batch gives back the items it took, at once', async () => {
		// An inbox item whose execution died: its claim lapsed, its payload kept.
		const eventId = `crashed-${version}`;
		const store = new Store(storeConfig(ctx!.schema));
		await store.ready().finally(() => store.close());
		await adminQuery(
			`INSERT INTO "${ctx!.schema}".processed_events
			   (consumer, event_id, status, workflow_id, execution_id, origin_execution_id, lease_until, expires_at, payload)
			 VALUES ('recover-stop', $1, 'in_progress', $2, 'dead-execution', 'dead-execution', now() - interval '1 minute', now() + interval '1 day', $3)`,
			[eventId, SLOW_REPLAY_FLOW, JSON.stringify({ order: `C-${version}` })],
		);
		const claim = async () =>
			(
				await adminQuery<{
					execution_id: string;
					returned: boolean;
					last_error: string | null;
					recover_attempts: number;
				}>(
					`SELECT execution_id, lease_until <= now() AS returned, last_error, recover_attempts FROM "${ctx!.schema}".processed_events WHERE consumer = 'recover-stop' AND event_id = $1`,
					[eventId],
				)
			)[0];
		// The webhook answers when the run ends: it is not awaited.
		void ctx!.n8n.api.webhook('reliability-recover', {}).catch(() => undefined);
		// Whichever Recover run took it (the webhook's or the minute's) is the one stopped.
		const holder = await waitFor(
			'the item taken by a Recover run, its re-run under way',
			async () => {
				const now = await claim();
				if (!now || now.execution_id === 'dead-execution' || now.returned) return undefined;
				const running = (await ctx!.n8n.api.executions('relRecoverWorkflow')).filter(
					(e) => e.status === 'running' && String(e.id) === now.execution_id,
				);
				return running[0];
			},
			90_000,
			200,
		);
		await ctx!.n8n.api.rest('POST', `/executions/${holder.id}/stop`);
		// Its hold (600 s in the bundled Recover) ends as the run ends: the next run takes it.
		const returned = await waitFor(
			'the item given back to Recover',
			async () => {
				const now = await claim();
				return now?.last_error?.includes(`execution ${holder.id}`) ? now : undefined;
			},
			20_000,
			250,
		);
		expect(returned.last_error).toMatch(/the recovery run \(execution \d+\) ended canceled/);
		// Given back, or already taken again by a later run; the stopped attempt stays counted.
		expect(returned.returned || returned.execution_id !== String(holder.id)).toBe(true);
		expect(returned.recover_attempts).toBeGreaterThanOrEqual(1);
		await adminQuery(
			`DELETE FROM "${ctx!.schema}".processed_events WHERE consumer = 'recover-stop'`,
		);
	});
});
