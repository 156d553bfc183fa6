import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { TestTarget } from '../../dev/target/server';
import { adminQuery } from '../helpers/store';
import { codeNode, connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const BATCH = 20;
const FLOW = 'restartBatchFlow';

/** A batch of writes, slow enough to be killed in the middle: 2 at a time, 300 ms each. */
const batchFlow = (url: string) =>
	workflow(
		FLOW,
		'Restart: a batch of writes',
		[
			webhookNode('restart-batch'),
			codeNode(
				'Split',
				'return $input.first().json.body.orders.map((order) => ({ json: order }));',
			),
			packageNode(
				'idempotentHttpWrite',
				'Create Order',
				{
					method: 'POST',
					url,
					integration: 'orders',
					keyMode: 'custom',
					customKey: '={{ $json.orderId }}',
					jsonBody: '={{ $json }}',
					retries: {
						concurrency: 2,
						deadlineSeconds: 2,
						baseDelaySeconds: 0.1,
						maxDelaySeconds: 0.2,
					},
				},
				[520, 0],
			),
		],
		connect(['Webhook', 'Split'], ['Split', 'Create Order']),
	);

describe.each(n8nVersionsUnderTest())('consumer restart in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const route = `/${version}/orders`;

	beforeAll(async () => {
		target.route(route, { honoursKey: true, latencyMs: 300 });
		ctx = await startWithPackage(version, 'restart', [batchFlow(target.url(route))]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('n8n killed with SIGKILL mid-batch, restarted, the batch delivered again: every item done exactly once', async () => {
		const orders = Array.from({ length: BATCH }, (_, i) => ({
			orderId: `${version}-order-${i}`,
			amount: 10 + i,
		}));
		await ctx!.n8n.api.webhook('restart-batch', { orders });
		await waitFor(
			'the batch under way',
			async () => (target.requestsTo(route).length >= 4 ? true : undefined),
			60_000,
			50,
		);
		await ctx!.n8n.kill();
		const sentBeforeCrash = target.requestsTo(route).length;
		expect(sentBeforeCrash).toBeLessThan(BATCH);

		await ctx!.n8n.start();
		await ctx!.n8n.api.login();
		// Claims of the killed run hold their lease (deadline + 30 s); then they are unknown outcomes.
		await waitFor(
			'the leases of the killed run to expire',
			async () =>
				(
					await adminQuery(
						`SELECT 1 FROM "${ctx!.schema}".idempotency_keys WHERE status = 'in_progress' AND lease_until > now()`,
					)
				).length === 0
					? true
					: undefined,
			120_000,
			1_000,
		);

		// The sender did not hear back and delivers the batch again.
		const before = (await ctx!.n8n.api.executions(FLOW)).filter(
			(e) => e.status === 'success',
		).length;
		await ctx!.n8n.api.webhook('restart-batch', { orders });
		const runs = await waitFor(
			'the redelivered batch to finish',
			async () => {
				const done = (await ctx!.n8n.api.executions(FLOW)).filter((e) => e.status === 'success');
				return done.length > before ? done : undefined;
			},
			120_000,
		);
		const rerun = await ctx!.n8n.api.execution(runs[0].id);
		const [success, failed] = nodeOutputs(rerun, 'Create Order');
		expect(failed).toEqual([]);
		expect(success).toHaveLength(BATCH);

		for (const order of orders) expect(target.effectsOf(route, order.orderId)).toHaveLength(1);
		expect(target.effectsOf(route)).toHaveLength(BATCH);
		const records = await adminQuery<{ status: string; n: number }>(
			`SELECT status, count(*)::int AS n FROM "${ctx!.schema}".idempotency_keys GROUP BY status`,
		);
		expect(records).toEqual([{ status: 'succeeded', n: BATCH }]);
	});
});
