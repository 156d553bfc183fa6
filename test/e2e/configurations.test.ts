import { bundledWorkflows } from '../../dev/bundled';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { TestTarget } from '../../dev/target/server';
import { connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import { adminQuery } from '../helpers/store';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Every item accounted for under the configurations users build, in real n8n: a workflow that
 * names the user's own error workflow (one that only posts to a chat), a claim in a sub-workflow
 * under a parent that claims, and a Wait long enough for n8n to offload the run and resume it
 * with new hooks. Each webhook answers on receipt, so the sender never delivers again: each item
 * must end done, or in exactly one open letter with one alert. Each test ends by reading the
 * store's rows and what reached the chat and the alert channel.
 */
jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const CHAT_HANDLER = 'cfgChatErrorFlow';
const OWN_HANDLER_FLOW = 'cfgOwnHandlerFlow';
const PARENT_FLOW = 'cfgParentFlow';
const CHILD_FLOW = 'cfgChildFlow';
const WAIT_DONE_FLOW = 'cfgWaitDoneFlow';
const WAIT_WRITE_FLOW = 'cfgWaitWriteFlow';
const WAIT_FAIL_FLOW = 'cfgWaitFailFlow';
/** Past n8n's offload threshold (65 s): the run is saved as waiting and resumed with new hooks. */
const WAIT_SECONDS = 70;

const stopAndError = (name: string, message: string, position: [number, number]) => ({
	id: `node-${name.replace(/\W/g, '')}`,
	name,
	type: 'n8n-nodes-base.stopAndError',
	typeVersion: 1,
	position,
	parameters: { errorType: 'errorMessage', errorMessage: message },
});

const claimNode = (consumer: string, eventId: string, name = 'Claim Order') => ({
	...packageNode('eventDedupe', name, { operation: 'claim', eventId, consumer }),
	typeVersion: 2,
});

const waitNode = (position: [number, number]) => ({
	id: 'node-WaitForStock',
	name: 'Wait for Stock',
	type: 'n8n-nodes-base.wait',
	typeVersion: 1.1,
	position,
	webhookId: `7d0e5f1a-${Math.random().toString(16).slice(2, 6)}-4c1b-9a2e-3f6b8d9c0e1f`,
	parameters: { amount: WAIT_SECONDS, unit: 'seconds' },
});

/** The user's own error workflow: Error Trigger -> a post to their chat. It parks nothing. */
const chatHandler = (chatUrl: string) =>
	workflow(
		CHAT_HANDLER,
		'Config: post failures to the team chat',
		[
			{
				id: 'node-ErrorTrigger',
				name: 'Error Trigger',
				type: 'n8n-nodes-base.errorTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'node-PostToChat',
				name: 'Post to Chat',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [260, 0],
				parameters: {
					method: 'POST',
					url: chatUrl,
					sendBody: true,
					specifyBody: 'json',
					jsonBody:
						'={{ JSON.stringify({ text: "Failed: " + $json.workflow.name + ": " + $json.execution.error.message, execution: $json.execution.id }) }}',
					options: {},
				},
			},
		],
		connect(['Error Trigger', 'Post to Chat']),
	);

const withErrorWorkflow = (file: ReturnType<typeof workflow>, errorWorkflow: string) => ({
	...file,
	settings: { executionOrder: 'v1', errorWorkflow },
});

describe.each(n8nVersionsUnderTest())('user configurations in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const major = Number(version.split('.')[0]);
	const chat = `/${version}/config/chat`;
	const demo = `/${version}/config/demo`;
	const stockWrite = `/${version}/config/stock`;

	beforeAll(async () => {
		target.route(stockWrite, { honoursKey: true });
		const bundled = bundledWorkflows(target.url(demo)).filter((w) =>
			['relAlertWorkflow', 'relErrorHandler1', 'relRecoverWorkflow'].includes(w.id),
		);
		const flows = [
			chatHandler(target.url(chat)),
			withErrorWorkflow(
				workflow(
					OWN_HANDLER_FLOW,
					'Config: orders with our own error workflow',
					[
						webhookNode('config-own-handler'),
						claimNode('own-handler', '={{ $json.body.order }}'),
						stopAndError('Post to ERP', 'ERP refused the order: amount must be positive', [520, 0]),
					],
					connect(['Webhook', 'Claim Order'], ['Claim Order', 'Post to ERP']),
				),
				CHAT_HANDLER,
			),
			withErrorWorkflow(
				workflow(
					CHILD_FLOW,
					'Config: order lines (a sub-workflow)',
					[
						{
							id: 'node-LinesEntry',
							name: 'Lines Entry',
							type: 'n8n-nodes-base.executeWorkflowTrigger',
							typeVersion: 1,
							position: [0, 0],
							parameters: {},
						},
						claimNode('order-lines', '={{ $json.body.order }}-lines', 'Claim Lines'),
						stopAndError('Book Lines', 'warehouse refused the lines', [520, 0]),
					],
					connect(['Lines Entry', 'Claim Lines'], ['Claim Lines', 'Book Lines']),
				),
				'relErrorHandler1',
			),
			withErrorWorkflow(
				workflow(
					PARENT_FLOW,
					'Config: orders that call the lines sub-workflow',
					[
						webhookNode('config-parent'),
						claimNode('orders-parent', '={{ $json.body.order }}'),
						{
							id: 'node-BookLines',
							name: 'Book Lines',
							type: 'n8n-nodes-base.executeWorkflow',
							typeVersion: 1,
							position: [520, 0],
							parameters: { source: 'database', workflowId: CHILD_FLOW, options: {} },
						},
					],
					connect(['Webhook', 'Claim Order'], ['Claim Order', 'Book Lines']),
				),
				'relErrorHandler1',
			),
			withErrorWorkflow(
				workflow(
					WAIT_DONE_FLOW,
					'Config: wait, then done (no node of the package after the Wait)',
					[
						webhookNode('config-wait-done'),
						claimNode('waits', '={{ $json.body.order }}'),
						waitNode([520, 0]),
						{
							id: 'node-Done',
							name: 'Done',
							type: 'n8n-nodes-base.noOp',
							typeVersion: 1,
							position: [780, 0],
							parameters: {},
						},
					],
					connect(
						['Webhook', 'Claim Order'],
						['Claim Order', 'Wait for Stock'],
						['Wait for Stock', 'Done'],
					),
				),
				CHAT_HANDLER,
			),
			withErrorWorkflow(
				workflow(
					WAIT_WRITE_FLOW,
					'Config: wait, then a write',
					[
						webhookNode('config-wait-write'),
						claimNode('waits-write', '={{ $json.body.order }}'),
						waitNode([520, 0]),
						packageNode(
							'idempotentHttpWrite',
							'Reserve Stock',
							{
								method: 'POST',
								url: target.url(stockWrite),
								integration: 'stock',
								keyMode: 'custom',
								customKey: '={{ $json.body.order }}:reserve',
								jsonBody: '={{ $json.body }}',
							},
							[780, 0],
						),
					],
					connect(
						['Webhook', 'Claim Order'],
						['Claim Order', 'Wait for Stock'],
						['Wait for Stock', 'Reserve Stock'],
					),
				),
				CHAT_HANDLER,
			),
			withErrorWorkflow(
				workflow(
					WAIT_FAIL_FLOW,
					'Config: wait, then a failure',
					[
						webhookNode('config-wait-fail'),
						claimNode('waits-fail', '={{ $json.body.order }}'),
						waitNode([520, 0]),
						stopAndError('Load Truck', 'the truck is full', [780, 0]),
					],
					connect(
						['Webhook', 'Claim Order'],
						['Claim Order', 'Wait for Stock'],
						['Wait for Stock', 'Load Truck'],
					),
				),
				CHAT_HANDLER,
			),
		];
		ctx = await startWithPackage(
			version,
			'configurations',
			[...bundled, ...flows],
			[],
			[
				...(major >= 2 ? ['relAlertWorkflow', 'relErrorHandler1', CHAT_HANDLER, CHILD_FLOW] : []),
				OWN_HANDLER_FLOW,
				PARENT_FLOW,
				WAIT_DONE_FLOW,
				WAIT_WRITE_FLOW,
				WAIT_FAIL_FLOW,
				'relRecoverWorkflow',
			],
		);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	const openLetters = async (key: string) =>
		await adminQuery<{
			id: string;
			status: string;
			error_class: string;
			error_message: string | null;
			step: string;
			run_link: string | null;
			payload: { body?: { order?: string } } | null;
		}>(
			`SELECT id, status, error_class, error_message, step, run_link, payload FROM "${ctx!.schema}".dead_letters
			 WHERE idempotency_key = $1 AND status IN ('new', 'held', 'replay_requested', 'being_fixed')`,
			[key],
		);
	const lettersLike = async (pattern: string) =>
		await adminQuery<{ idempotency_key: string; status: string }>(
			`SELECT idempotency_key, status FROM "${ctx!.schema}".dead_letters WHERE idempotency_key LIKE $1`,
			[pattern],
		);
	const claimOf = async (consumer: string, eventId: string) =>
		(
			await adminQuery<{ status: string; settled_as: string | null }>(
				`SELECT status, settled_as FROM "${ctx!.schema}".processed_events WHERE consumer = $1 AND event_id = $2`,
				[consumer, eventId],
			)
		)[0];
	const alertsAbout = (key: string) =>
		target.requestsTo(`${demo}/alerts`).filter((r) =>
			String((r.body as { text?: string }).text)
				.split('\n')[0]
				.endsWith(`(${key})`),
		);
	const recover = () => ctx!.n8n.api.webhook('reliability-recover', {});

	it("a workflow naming the user's own error workflow: the chat gets its post, and the item one letter and one alert", async () => {
		const order = `OWN-${version}`;
		const key = `event:own-handler:${order}`;
		expect((await ctx!.n8n.api.webhook('config-own-handler', { order, amount: -5 })).status).toBe(
			200,
		);
		const [letter] = await waitFor(
			'the failed item parked',
			async () => {
				const found = await openLetters(key);
				return found.length > 0 ? found : undefined;
			},
			90_000,
			250,
		);
		expect(letter).toMatchObject({
			status: 'new',
			error_class: 'execution',
			error_message: 'ERP refused the order: amount must be positive',
			step: 'Post to ERP',
		});
		expect(letter.run_link).toMatch(new RegExp(`/workflow/${OWN_HANDLER_FLOW}/executions/\\d+$`));
		expect(letter.payload?.body?.order).toBe(order);
		// The letter first, then the claim (a failure between the two leaves the claim to Recover).
		await waitFor(
			'the claim failed, held by its letter',
			async () => {
				const claim = await claimOf('own-handler', order);
				return claim?.status === 'failed' && claim.settled_as === 'parked' ? true : undefined;
			},
			30_000,
			100,
		);
		// The user's own error workflow ran as it always did.
		await waitFor(
			'the chat post',
			async () =>
				target
					.requestsTo(chat)
					.some((r) => String((r.body as { text?: string }).text).includes('ERP refused the order'))
					? true
					: undefined,
			60_000,
			250,
		);
		// Recover sends the one alert (nothing of ours ran after the failure).
		await recover();
		await waitFor(
			'the alert',
			async () => (alertsAbout(key).length > 0 ? true : undefined),
			90_000,
			500,
		);
		await recover();
		await new Promise((resolve) => setTimeout(resolve, 3_000));
		expect(alertsAbout(key)).toHaveLength(1);
		expect(await openLetters(key)).toHaveLength(1);
	});

	it('a sub-workflow that claims under a parent that claims: one letter (the order), one alert, the lines held by it', async () => {
		const order = `SUB-${version}`;
		expect((await ctx!.n8n.api.webhook('config-parent', { order })).status).toBe(200);
		const parentKey = `event:orders-parent:${order}`;
		const [letter] = await waitFor(
			"the parent's item parked",
			async () => {
				const found = await openLetters(parentKey);
				return found.length > 0 ? found : undefined;
			},
			90_000,
			250,
		);
		expect(letter).toMatchObject({ status: 'new', error_class: 'execution' });
		expect(letter.payload?.body?.order).toBe(order);
		// The sub-workflow's claim: failed, held by the parent's letter, no letter of its own,
		// after its own error workflow and Recover's sweep had their time.
		await waitFor(
			"the sub-workflow's claim held",
			async () =>
				(await claimOf('order-lines', `${order}-lines`))?.status === 'failed' ? true : undefined,
			60_000,
			250,
		);
		await recover();
		await waitFor(
			'the alert',
			async () => (alertsAbout(parentKey).length > 0 ? true : undefined),
			90_000,
			500,
		);
		// Past the sweep's grace: the lines stay held by the order's letter.
		await new Promise((resolve) => setTimeout(resolve, 65_000));
		await recover();
		await waitFor(
			'the sweep to look at the lines',
			async () =>
				(await claimOf('order-lines', `${order}-lines`))?.settled_as === 'covered'
					? true
					: undefined,
			60_000,
			500,
		);
		expect(await lettersLike(`event:order-lines:${order}%`)).toEqual([]);
		expect(await openLetters(parentKey)).toHaveLength(1);
		const alerts = target
			.requestsTo(`${demo}/alerts`)
			.filter((r) => String((r.body as { text?: string }).text).includes(order));
		expect(alerts).toHaveLength(1);
	});

	it(`runs that wait ${WAIT_SECONDS} s (offloaded, resumed with new hooks): done once, or parked with what failed`, async () => {
		const done = `WD-${version}`;
		const write = `WW-${version}`;
		const fail = `WF-${version}`;
		expect((await ctx!.n8n.api.webhook('config-wait-done', { order: done })).status).toBe(200);
		expect((await ctx!.n8n.api.webhook('config-wait-write', { order: write })).status).toBe(200);
		expect((await ctx!.n8n.api.webhook('config-wait-fail', { order: fail })).status).toBe(200);
		// The write after the Wait holds the claim again: the resumed run's end completes it.
		await waitFor(
			'the resumed write done',
			async () => ((await claimOf('waits-write', write))?.status === 'done' ? true : undefined),
			(WAIT_SECONDS + 90) * 1000,
			1_000,
		);
		expect(target.effectsOf(stockWrite).filter((e) => e.key === `${write}:reserve`)).toHaveLength(
			1,
		);
		// No node of the package after the Wait: once its hold lapsed, Recover asks n8n's record.
		const settled = async () => {
			await recover().catch(() => undefined);
			const doneClaim = await claimOf('waits', done);
			const failLetters = await openLetters(`event:waits-fail:${fail}`);
			return doneClaim?.status === 'done' && failLetters.length > 0 ? failLetters : undefined;
		};
		const [failLetter] = await waitFor('both settled by Recover', settled, 240_000, 5_000);
		expect(failLetter).toMatchObject({
			status: 'new',
			error_class: 'execution',
			error_message: 'the truck is full',
			step: 'Load Truck',
		});
		expect(await lettersLike(`event:waits:${done}`)).toEqual([]);
		expect(await lettersLike(`event:waits-write:${write}`)).toEqual([]);
		// Never run again: one execution per order, each finished.
		for (const [flow, count] of [
			[WAIT_DONE_FLOW, 1],
			[WAIT_WRITE_FLOW, 1],
			[WAIT_FAIL_FLOW, 1],
		] as const)
			expect(await ctx!.n8n.api.executions(flow)).toHaveLength(count);
		await waitFor(
			'the alert about the failed run',
			async () => (alertsAbout(`event:waits-fail:${fail}`).length > 0 ? true : undefined),
			90_000,
			1_000,
		);
	});
});
