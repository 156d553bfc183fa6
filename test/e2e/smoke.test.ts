import { latestMigrationId } from '../../lib/store';
import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { adminQuery } from '../helpers/store';
import {
	connect,
	storeCredential,
	storeCredentialRef,
	webhookNode,
	workflow,
} from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

const SMOKE_ID = 'smokeDedupe01';
const smokeWorkflow = workflow(
	SMOKE_ID,
	'Smoke: webhook into Event Dedupe',
	[
		webhookNode('reliability-smoke'),
		{
			id: 'c5a0a8f4-0000-4000-8000-000000000001',
			name: 'Event Dedupe',
			type: 'n8n-nodes-reliability.eventDedupe',
			typeVersion: 1,
			position: [260, 0],
			parameters: { operation: 'claim', eventId: '={{ $json.body.id }}', consumer: 'smoke' },
			credentials: storeCredentialRef,
		},
	],
	connect(['Webhook', 'Event Dedupe']),
);

describe.each(n8nVersionsUnderTest())('n8n %s with the package installed', (version) => {
	let ctx: E2eContext | undefined;

	beforeAll(async () => {
		ctx = await startWithPackage(version, 'smoke', [smokeWorkflow]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('loads our node type and our credential type', async () => {
		expect(await ctx!.n8n.api.nodeTypeNames()).toContain('n8n-nodes-reliability.eventDedupe');
		expect(await ctx!.n8n.api.credentialTypeNames()).toContain('reliabilityStoreApi');
	});

	it('describes every node with categories and a documentation link; the write and park nodes are offered as tools', async () => {
		const ours = (await ctx!.n8n.api.nodeTypes()).filter((t) =>
			t.name.startsWith('n8n-nodes-reliability.'),
		);
		const base = ours.filter((t) => !t.name.endsWith('Tool'));
		expect(base.map((t) => t.name).sort()).toEqual([
			'n8n-nodes-reliability.deadLetterPark',
			'n8n-nodes-reliability.eventDedupe',
			'n8n-nodes-reliability.idempotentHttpWrite',
			'n8n-nodes-reliability.reliabilityControl',
			'n8n-nodes-reliability.transactionalOutbox',
		]);
		for (const type of base) {
			expect(type.codex?.categories?.length).toBeGreaterThan(0);
			expect(type.codex?.resources?.primaryDocumentation?.[0].url).toMatch(
				/^https:\/\/www\.npmjs\.com\/package\/n8n-nodes-reliability#[a-z-]+$/,
			);
		}
		const tools = base.filter((t) => t.usableAsTool).map((t) => t.name);
		expect(tools.sort()).toEqual([
			'n8n-nodes-reliability.deadLetterPark',
			'n8n-nodes-reliability.idempotentHttpWrite',
		]);
		// The write names its two outputs; its tool version, as n8n builds it for an AI Agent, has
		// the one tool output, and no name left over from the write's outputs labels it.
		const write = ours.find((t) => t.name === 'n8n-nodes-reliability.idempotentHttpWrite')!;
		expect(write.outputs).toEqual([
			{ type: 'main', displayName: 'Success' },
			{ type: 'main', displayName: 'Failed' },
		]);
		const writeTool = ours.find((t) => t.name === 'n8n-nodes-reliability.idempotentHttpWriteTool');
		expect(writeTool?.outputs).toEqual(['ai_tool']);
		expect(writeTool?.outputNames ?? []).toEqual([]);
	});

	it('runs a workflow that uses the credential: the store is created and the event recorded once', async () => {
		const first = await ctx!.n8n.api.webhook('reliability-smoke', { id: 'evt-smoke-1' });
		expect(first.status).toBe(200);
		const [run1] = await ctx!.n8n.api.waitForExecutions(SMOKE_ID, 1);
		const second = await ctx!.n8n.api.webhook('reliability-smoke', { id: 'evt-smoke-1' });
		expect(second.status).toBe(200);
		const runs = await ctx!.n8n.api.waitForExecutions(SMOKE_ID, 2);

		expect(run1.status).toBe('success');
		const [newOut1, dupOut1] = nodeOutputs(runs[0], 'Event Dedupe');
		expect(newOut1.map((item) => (item.body as { id: string }).id)).toEqual(['evt-smoke-1']);
		expect(dupOut1).toEqual([]);
		const [newOut2, dupOut2] = nodeOutputs(runs[1], 'Event Dedupe');
		expect(newOut2).toEqual([]);
		expect(dupOut2).toHaveLength(1);
		expect(dupOut2[0]._dedupe).toMatchObject({
			eventId: 'evt-smoke-1',
			outcome: 'duplicate',
			reason: 'done',
		});

		const rows = await adminQuery<{ event_id: string; execution_id: string }>(
			`SELECT event_id, execution_id FROM "${ctx!.schema}".processed_events`,
		);
		expect(rows).toEqual([{ event_id: 'evt-smoke-1', execution_id: runs[0].id }]);
	});

	it("the credential's test button says what it found, or what failed", async () => {
		const good = await ctx!.n8n.api.testCredential(
			'reliabilityStoreApi',
			storeCredential(ctx!.schema).data,
		);
		expect(good).toEqual({
			status: 'OK',
			message: expect.stringMatching(
				new RegExp(
					`^PostgreSQL \\d+.*, schema ${ctx!.schema} at migration ${latestMigrationId()} of ${latestMigrationId()}$`,
				),
			),
		});

		const unreachable = await ctx!.n8n.api.testCredential('reliabilityStoreApi', {
			...storeCredential(ctx!.schema).data,
			host: '127.0.0.1',
			port: 1,
		});
		expect(unreachable).toEqual({
			status: 'Error',
			message: expect.stringMatching(/^127\.0\.0\.1:1 unreachable: connection refused/),
		});

		const badSchema = await ctx!.n8n.api.testCredential('reliabilityStoreApi', {
			...storeCredential(ctx!.schema).data,
			schema: 'Robert"); DROP',
		});
		expect(badSchema).toEqual({
			status: 'Error',
			message: expect.stringMatching(/is not a valid identifier/),
		});
	});
});
