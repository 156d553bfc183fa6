import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { adminQuery } from '../helpers/store';
import { codeNode, connect, storeCredentialRef, webhookNode, workflow } from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

const dedupeNode = (
	parameters: Record<string, unknown>,
	name = 'Event Dedupe',
	position: [number, number] = [260, 0],
) => ({
	id: `node-${name.replace(/\W/g, '')}`,
	name,
	type: 'n8n-nodes-reliability.eventDedupe',
	typeVersion: 1,
	position,
	parameters,
	credentials: storeCredentialRef,
});

const ERROR_HANDLER = 'dedupeErrorHandler';
const CLAIM = 'dedupeClaimFlow';
const ORDERED = 'dedupeOrderedFlow';
const BULK = 'dedupeBulkFlow';
const VALIDATED = 'dedupeValidatedFlow';

/** Webhook -> claim -> a step that fails when asked to; its error workflow releases the claims. */
const claimFlow = {
	...workflow(
		CLAIM,
		'Dedupe: claim then work',
		[
			webhookNode('dedupe-claim'),
			dedupeNode({ operation: 'claim', eventId: '={{ $json.body.id }}', consumer: 'e2e-orders' }),
			codeNode(
				'Work',
				"if ($input.first().json.body.fail) { throw new Error('the CRM step failed'); }\nreturn $input.all();",
				[520, 0],
			),
		],
		connect(['Webhook', 'Event Dedupe'], ['Event Dedupe', 'Work', 0]),
	),
	settings: { executionOrder: 'v1', errorWorkflow: ERROR_HANDLER },
};

const errorHandler = workflow(
	ERROR_HANDLER,
	'Dedupe: release the claims of a failed execution',
	[
		{
			id: 'node-ErrorTrigger',
			name: 'Error Trigger',
			type: 'n8n-nodes-base.errorTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		dedupeNode(
			{ operation: 'release', releaseBy: 'execution', executionId: '={{ $json.execution.id }}' },
			'Release Claims',
		),
	],
	connect(['Error Trigger', 'Release Claims']),
);

const orderedFlow = workflow(
	ORDERED,
	'Dedupe: ordered by entity version',
	[
		webhookNode('dedupe-ordered'),
		dedupeNode({
			operation: 'claim',
			eventId: '={{ $json.body.id }}',
			consumer: 'e2e-ordered',
			checkOrder: true,
			entityKey: '={{ $json.body.customer }}',
			entityVersion: '={{ $json.body.version }}',
		}),
	],
	connect(['Webhook', 'Event Dedupe']),
);

const bulkFlow = workflow(
	BULK,
	'Dedupe: 10,000 events in one run',
	[
		webhookNode('dedupe-bulk'),
		codeNode(
			'Make Events',
			'return Array.from({ length: 10000 }, (_, i) => ({ json: { id: `bulk-${i}` } }));',
			[260, 0],
		),
		dedupeNode(
			{ operation: 'claim', eventId: '={{ $json.id }}', consumer: 'e2e-bulk' },
			'Event Dedupe',
			[520, 0],
		),
	],
	connect(['Webhook', 'Make Events'], ['Make Events', 'Event Dedupe']),
);

const validatedFlow = workflow(
	VALIDATED,
	'Dedupe: validated at the first step',
	[
		webhookNode('dedupe-validated'),
		dedupeNode({
			operation: 'claim',
			eventId: '={{ $json.body.id }}',
			consumer: 'e2e-validated',
			validate: true,
			requiredFields: {
				field: [
					{ path: 'body.email', type: 'string' },
					{ path: 'body.phone', type: 'any' },
				],
			},
			onInvalid: 'route',
		}),
	],
	connect(['Webhook', 'Event Dedupe']),
);

describe.each(n8nVersionsUnderTest())('Event Dedupe in n8n %s', (version) => {
	let ctx: E2eContext | undefined;

	beforeAll(async () => {
		ctx = await startWithPackage(version, 'dedupe', [
			claimFlow,
			errorHandler,
			orderedFlow,
			bulkFlow,
			validatedFlow,
		]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	const processed = (where: string) =>
		adminQuery<{ event_id: string; status: string }>(
			`SELECT event_id, status FROM "${ctx!.schema}".processed_events WHERE ${where} ORDER BY event_id`,
		);

	it('the same webhook posted 10 times at once gives exactly one New', async () => {
		const posts = await Promise.all(
			Array.from({ length: 10 }, () => ctx!.n8n.api.webhook('dedupe-claim', { id: 'evt-burst' })),
		);
		expect(posts.map((p) => p.status)).toEqual(Array(10).fill(200));
		const runs = await ctx!.n8n.api.waitForExecutions(CLAIM, 10);
		const news = runs.flatMap((run) => nodeOutputs(run, 'Event Dedupe')[0]);
		const duplicates = runs.flatMap((run) => nodeOutputs(run, 'Event Dedupe')[1]);
		expect(news).toHaveLength(1);
		expect(duplicates).toHaveLength(9);
		// The work step ran once, for the one New item.
		expect(
			runs.filter((run) => (run.data.resultData.runData.Work?.[0]?.data?.main[0] ?? []).length > 0),
		).toHaveLength(1);
		expect(await processed(`event_id = 'evt-burst'`)).toEqual([
			{ event_id: 'evt-burst', status: 'done' },
		]);
	});

	it('a claim whose execution failed is released by the error workflow, and the redelivery is New', async () => {
		await ctx!.n8n.api.webhook('dedupe-claim', { id: 'evt-flaky', fail: true });
		const [failed] = (await ctx!.n8n.api.waitForExecutions(CLAIM, 11)).slice(-1);
		expect(failed.status).toBe('error');
		await ctx!.n8n.api.waitForExecutions(ERROR_HANDLER, 1);
		expect(await processed(`event_id = 'evt-flaky'`)).toEqual([]);

		await ctx!.n8n.api.webhook('dedupe-claim', { id: 'evt-flaky' });
		const [redelivered] = (await ctx!.n8n.api.waitForExecutions(CLAIM, 12)).slice(-1);
		expect(redelivered.status).toBe('success');
		expect(nodeOutputs(redelivered, 'Event Dedupe')[0]).toHaveLength(1);
		expect(await processed(`event_id = 'evt-flaky'`)).toEqual([
			{ event_id: 'evt-flaky', status: 'done' },
		]);
	});

	it('an item without an ID fails the run with an error naming its index, and claims nothing', async () => {
		await ctx!.n8n.api.webhook('dedupe-claim', { note: 'no id here' });
		const [run] = (await ctx!.n8n.api.waitForExecutions(CLAIM, 13)).slice(-1);
		expect(run.status).toBe('error');
		const error = run.data.resultData.runData['Event Dedupe'][0].error!;
		expect(error.message).toBe('Item 0 has no event ID');
		expect(error.description).toMatch(/Set Event ID/);
	});

	it('versions arriving 3, 1, 2 send 1 and 2 to Stale', async () => {
		for (const version of [3, 1, 2]) {
			await ctx!.n8n.api.webhook('dedupe-ordered', {
				id: `cust-9-v${version}`,
				customer: 'cust-9',
				version,
			});
			await ctx!.n8n.api.waitForExecutions(ORDERED, [3, 1, 2].indexOf(version) + 1);
		}
		const runs = await ctx!.n8n.api.waitForExecutions(ORDERED, 3);
		const routed = runs.map((run) => nodeOutputs(run, 'Event Dedupe').map((items) => items.length));
		// New, Duplicate, Stale, and Invalid (always there unless invalid items fail the run).
		expect(routed).toEqual([
			[1, 0, 0, 0],
			[0, 0, 1, 0],
			[0, 0, 1, 0],
		]);
		expect(nodeOutputs(runs[1], 'Event Dedupe')[2][0]._dedupe).toEqual({
			eventId: 'cust-9-v1',
			outcome: 'stale',
			lastVersion: 3,
		});
	});

	it('an item missing a required field goes to Invalid with a message naming the field, and is not claimed', async () => {
		await ctx!.n8n.api.webhook('dedupe-validated', { id: 'lead-1', email: 'a@example.com' });
		const [run] = await ctx!.n8n.api.waitForExecutions(VALIDATED, 1);
		const [news, duplicates, invalid] = nodeOutputs(run, 'Event Dedupe');
		expect([news.length, duplicates.length, invalid.length]).toEqual([0, 0, 1]);
		expect(invalid[0]._dedupe).toEqual({
			outcome: 'invalid',
			message: 'field "body.phone" is missing',
		});
		expect(await processed(`consumer = 'e2e-validated'`)).toEqual([]);
	});

	it('10,000 IDs in one run are all New, and all recorded', async () => {
		await ctx!.n8n.api.webhook('dedupe-bulk', {});
		const [run] = await ctx!.n8n.api.waitForExecutions(BULK, 1, 180_000);
		expect(run.status).toBe('success');
		const [news, duplicates] = nodeOutputs(run, 'Event Dedupe');
		expect(news).toHaveLength(10_000);
		expect(duplicates).toHaveLength(0);
		const count = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${ctx!.schema}".processed_events WHERE consumer = 'e2e-bulk'`,
		);
		expect(count[0].n).toBe(10_000);
	});
});
