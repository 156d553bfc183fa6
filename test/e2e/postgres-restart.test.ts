import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import {
	type EmbeddedPostgres,
	queryServer,
	startEmbeddedPostgres,
} from '../../dev/harness/postgres';
import { TestTarget } from '../../dev/target/server';
import { connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import { type E2eContext, startWith, stopAndClean } from './fixtures';

/**
 * The store's Postgres restarted in the middle of a batch. The store is a dedicated embedded
 * Postgres (the shared server on 5432 stays up for everyone else); n8n keeps its own data in
 * SQLite, so only the store goes away. The sender is a real one: it delivers each order to a
 * webhook that answers when the workflow is done, and delivers again whenever the answer is
 * not a 200, until every order is acknowledged. Afterwards every order must have exactly one
 * effect at the target: nothing lost across the restart, nothing written twice.
 */
jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const ORDERS = 30;
/** Orders in flight at once, each a webhook call waiting for its execution. */
const SENDER_PARALLELISM = 3;
const REDELIVERY_DELAY_MS = 1_000;
const FLOW = 'pgRestartFlow';
const PATH = 'pg-restart-orders';

/**
 * Webhook (answers with the last node's output, or 500 when the execution fails) -> Idempotent
 * HTTP Write, one order per execution, a slow target. A failure is parked and fails the
 * execution, so the sender hears about it and delivers again. The deadline is short so that a
 * record left in progress by an interrupted execution (lease = deadline + 30 s) frees up soon.
 */
const restartFlow = (url: string) =>
	workflow(
		FLOW,
		'Postgres restart: one order per delivery',
		[
			{
				...webhookNode(PATH),
				parameters: {
					httpMethod: 'POST',
					path: PATH,
					responseMode: 'lastNode',
					responseData: 'firstEntryJson',
					options: {},
				},
			},
			packageNode('idempotentHttpWrite', 'Create Order', {
				method: 'POST',
				url,
				integration: 'orders',
				keyMode: 'custom',
				customKey: '={{ $json.body.orderId }}',
				jsonBody: '={{ $json.body }}',
				retries: {
					concurrency: 1,
					deadlineSeconds: 3,
					baseDelaySeconds: 0.1,
					maxDelaySeconds: 0.5,
				},
				onFailure: 'parkAndFail',
				parkOptions: { owner: 'order-ops', impact: 'order not created' },
			}),
		],
		connect(['Webhook', 'Create Order']),
	);

interface Delivery {
	orderId: string;
	status: number | 'network error';
	at: number;
}

describe.each(n8nVersionsUnderTest())('store Postgres restarted mid-batch in n8n %s', (version) => {
	let store: EmbeddedPostgres | undefined;
	let ctx: E2eContext | undefined;
	const route = `/${version}/pg-restart/orders`;
	const storeQuery = <R = Record<string, unknown>>(sql: string, values: unknown[] = []) =>
		queryServer<R>(store!.settings, sql, values);

	beforeAll(async () => {
		target.route(route, { honoursKey: true, latencyMs: 600 });
		store = await startEmbeddedPostgres(`restart-${version.replace(/\W/g, '_')}`);
		ctx = await startWith(version, 'pgrestart', {
			workflows: [restartFlow(target.url(route))],
			store: store.settings,
		});
	});

	afterAll(async () => {
		const steps: Array<() => Promise<unknown>> = [
			() => stopAndClean(ctx),
			async () => {
				if (ctx) await storeQuery(`DROP SCHEMA IF EXISTS "${ctx.schema}" CASCADE`);
			},
			async () => await store?.stop(),
		];
		const errors: unknown[] = [];
		for (const step of steps) await step().catch((error: unknown) => errors.push(error));
		if (errors.length > 0) throw errors[0];
	});

	it('a fast restart in the middle of 30 writes: every order ends with exactly one effect, failures were reported and redelivered', async () => {
		const orders = Array.from({ length: ORDERS }, (_, i) => ({
			orderId: `${version}-pg-${i}`,
			amount: 100 + i,
		}));
		const deliveries: Delivery[] = [];
		const acknowledged = new Map<string, Record<string, unknown>>();

		/** The sender: deliver, and deliver again after a pause until n8n answers 200. */
		const deliver = async (order: (typeof orders)[number]): Promise<void> => {
			const deadline = Date.now() + 240_000;
			for (;;) {
				const answer = await ctx!.n8n.api.webhook(PATH, order).catch(() => undefined);
				deliveries.push({
					orderId: order.orderId,
					status: answer?.status ?? 'network error',
					at: Date.now(),
				});
				if (answer?.status === 200) {
					acknowledged.set(order.orderId, answer.body as Record<string, unknown>);
					return;
				}
				if (Date.now() > deadline) throw new Error(`order ${order.orderId} was never acknowledged`);
				await new Promise((resolve) => setTimeout(resolve, REDELIVERY_DELAY_MS));
			}
		};

		let next = 0;
		const sender = Promise.all(
			Array.from({ length: SENDER_PARALLELISM }, async () => {
				while (next < orders.length) await deliver(orders[next++]);
			}),
		);

		// Restart the store once a few orders are written and while a write is on its way at the
		// target (received, not yet committed: the target answers after 600 ms), so that write's
		// outcome cannot be recorded: stop fast, 3 s down, start again.
		const inFlight = () =>
			target.requestsTo(route).filter((r) => target.effectsOf(route, r.key).length === 0);
		await waitFor(
			'the batch under way with a write in flight',
			async () => (target.effectsOf(route).length >= 6 && inFlight().length > 0 ? true : undefined),
			60_000,
			20,
		);
		const interrupted = inFlight().map((r) => r.key!);
		const writtenBeforeRestart = target.effectsOf(route).length;
		const restartedAt = Date.now();
		await store!.restart(3_000);
		await sender;

		// The restart hit the batch: some deliveries failed and were delivered again.
		expect(writtenBeforeRestart).toBeLessThan(ORDERS);
		const failedDeliveries = deliveries.filter((d) => d.status !== 200);
		expect(failedDeliveries.every((d) => d.at >= restartedAt)).toBe(true);
		// The writes in flight reached the target, and still their executions failed (the outcome
		// could not be recorded): the case where only the idempotency key prevents a second effect.
		expect(interrupted.length).toBeGreaterThan(0);
		for (const orderId of interrupted) {
			const firstFailure = failedDeliveries.find((d) => d.orderId === orderId);
			expect(firstFailure).toBeDefined();
			expect(target.effectsOf(route, orderId)[0].at).toBeLessThan(firstFailure!.at);
		}

		// At the target: exactly one effect per order, and each acknowledgement carries that effect.
		for (const order of orders) {
			const effects = target.effectsOf(route, order.orderId);
			expect(effects).toHaveLength(1);
			expect(acknowledged.get(order.orderId)).toMatchObject({
				id: effects[0].id,
				_reliability: { key: order.orderId },
			});
		}
		expect(target.effectsOf(route)).toHaveLength(ORDERS);

		// In the store: every key succeeded. Whatever was parked on the way carries its order.
		const byKey = (a: { key: string }, b: { key: string }) =>
			a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
		const keys = await storeQuery<{ key: string; status: string }>(
			`SELECT key, status FROM "${ctx!.schema}".idempotency_keys`,
		);
		expect(keys.sort(byKey)).toEqual(
			orders.map((o) => ({ key: o.orderId, status: 'succeeded' })).sort(byKey),
		);
		const parked = await storeQuery<{
			idempotency_key: string;
			payload: { body: { orderId: string; amount: number } };
		}>(`SELECT idempotency_key, payload FROM "${ctx!.schema}".dead_letters`);
		for (const record of parked) {
			const order = orders.find((o) => o.orderId === record.idempotency_key);
			expect(order).toBeDefined();
			expect(record.payload.body).toEqual(order);
		}

		// Every failed execution is one the sender heard about (a non-200 answer), never a silent one.
		const executions = await ctx!.n8n.api.executions(FLOW);
		const failedRuns = executions.filter((e) => e.status !== 'success');
		expect(failedRuns.length).toBe(
			failedDeliveries.filter((d) => d.status !== 'network error').length,
		);
	});
});
