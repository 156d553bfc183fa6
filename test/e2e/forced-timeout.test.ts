import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { TestTarget } from '../../dev/target/server';
import { adminQuery } from '../helpers/store';
import { connect, packageNode, trigger, webhookNode, workflow } from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Forced timeouts: the target takes longer to answer than the write's per-attempt timeout. A
 * request that timed out may still commit at the target afterwards (this target does: it
 * commits when its delay is over, whether or not the caller is still listening), so every
 * timeout is an unknown outcome that only the idempotency key makes safe to retry.
 */
jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const FLOW = 'forcedTimeoutFlow';
const PATH = 'forced-timeout';
/** The target's hang: well past the per-attempt timeout. */
const HANG_MS = 2_500;

/**
 * Webhook -> Idempotent HTTP Write: 1 s per attempt, a 4 s deadline and no backoff, so the
 * deadline (not the attempt cap) ends the retries after four attempts of one second each.
 */
const timeoutFlow = workflow(
	FLOW,
	'Forced timeout: a write to a hanging target',
	[
		webhookNode(PATH),
		packageNode('idempotentHttpWrite', 'Create Order', {
			method: 'POST',
			url: '={{ $json.body.targetUrl }}',
			integration: 'orders',
			keyMode: 'custom',
			customKey: '={{ $json.body.orderId }}',
			jsonBody: '={{ $json.body.order }}',
			timeout: 1_000,
			retries: {
				maxAttempts: 10,
				baseDelaySeconds: 0,
				maxDelaySeconds: 0,
				deadlineSeconds: 4,
				concurrency: 1,
			},
			onFailure: 'parkAndRoute',
			parkOptions: { owner: 'order-ops', impact: 'order not created' },
		}),
	],
	connect(['Webhook', 'Create Order']),
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(n8nVersionsUnderTest())('forced timeout in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const post = (route: string, orderId: string, order: unknown) =>
		trigger(ctx!.n8n, FLOW, PATH, { orderId, order, targetUrl: target.url(route) });
	const keyRecord = async (key: string) =>
		(
			await adminQuery<{
				status: string;
				attempts: number;
				lease_expired: boolean;
				last_error: string | null;
			}>(
				`SELECT status, attempts, lease_until <= now() AS lease_expired, last_error FROM "${ctx!.schema}".idempotency_keys WHERE key = $1`,
				[key],
			)
		)[0];

	beforeAll(async () => {
		ctx = await startWithPackage(version, 'timeout', [timeoutFlow]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('every attempt times out until the deadline: Failed and parked as an unknown outcome; after the target recovers a redelivery leaves exactly one effect', async () => {
		const route = `/${version}/hanging`;
		const orderId = `${version}-order-hang`;
		const order = { sku: 'A-1', quantity: 2 };
		target.route(route, { honoursKey: true, latencyMs: HANG_MS });

		const run = await post(route, orderId, order);
		const [success, failed] = nodeOutputs(run, 'Create Order');
		expect(success).toEqual([]);
		expect(failed).toHaveLength(1);
		expect(failed[0]).toMatchObject({ class: 'unknown_outcome', key: orderId, owner: 'order-ops' });
		expect(String(failed[0].message)).toMatch(/deadline of 4 s reached after \d+ attempts/);
		const attempts = failed[0].attempts as number;
		expect(attempts).toBeGreaterThanOrEqual(3);

		// Every attempt reached the target, all with the one key.
		const sent = target.requestsTo(route);
		expect(sent).toHaveLength(attempts);
		expect(new Set(sent.map((r) => r.key))).toEqual(new Set([orderId]));

		// The record: unknown (the requests went out; whether one took effect nobody knows), which
		// a redelivery reconciles before sending again; the last error says the attempts timed out
		// until the deadline ran out.
		const record = await keyRecord(orderId);
		expect(record).toMatchObject({ status: 'unknown', attempts, lease_expired: true });
		expect(record.last_error).toMatch(/timeout/i);
		expect(record.last_error).toMatch(/deadline of 4 s reached/);
		const [parked] = await adminQuery<{
			error_class: string;
			status: string;
			idempotency_key: string;
			attempts: number;
			payload: { body: { orderId: string; order: unknown } };
		}>(
			`SELECT error_class, status, idempotency_key, attempts, payload FROM "${ctx!.schema}".dead_letters WHERE id = $1`,
			[failed[0].deadLetterId],
		);
		expect(parked).toMatchObject({
			error_class: 'unknown_outcome',
			status: 'new',
			idempotency_key: orderId,
			attempts,
			payload: { body: { orderId, order } },
		});

		// The timed-out attempts land at the target after the node gave up: the first commits, the
		// others carry the same key and are answered from the target's saved response.
		await waitFor(
			'the timed-out attempts to land',
			async () => (target.effectsOf(route).length > 0 ? true : undefined),
			10_000,
			50,
		);
		await sleep(HANG_MS + 500);
		expect(target.effectsOf(route)).toHaveLength(1);

		// The target recovers; the sender delivers the order again.
		target.route(route, { honoursKey: true });
		const again = await post(route, orderId, order);
		const [replayed, failedAgain] = nodeOutputs(again, 'Create Order');
		expect(failedAgain).toEqual([]);
		expect(replayed).toHaveLength(1);
		expect(replayed[0]._reliability).toMatchObject({ key: orderId, attempts: 1 });
		// The answer is the effect the timed-out attempt made, not a new one.
		expect(replayed[0].id).toBe(target.effectsOf(route)[0].id);
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(target.requestsTo(route)).toHaveLength(attempts + 1);
		expect(new Set(target.requestsTo(route).map((r) => r.key))).toEqual(new Set([orderId]));
		// The record counts every attempt the key had, across its owners; the run's output its own.
		expect(await keyRecord(orderId)).toMatchObject({
			status: 'succeeded',
			attempts: attempts + 1,
		});
	});

	it('two attempts time out, the third answers inside the deadline: success and exactly one effect', async () => {
		const route = `/${version}/slow-twice`;
		const orderId = `${version}-order-slow`;
		target.route(route, { honoursKey: true });
		target.script(route, { delayMs: HANG_MS }, { delayMs: HANG_MS });

		const run = await post(route, orderId, { sku: 'B-2', quantity: 1 });
		const [success, failed] = nodeOutputs(run, 'Create Order');
		expect(failed).toEqual([]);
		expect(success).toHaveLength(1);
		expect(success[0]._reliability).toMatchObject({ key: orderId, replayed: false, attempts: 3 });
		const sent = target.requestsTo(route);
		expect(sent).toHaveLength(3);
		expect(new Set(sent.map((r) => r.key))).toEqual(new Set([orderId]));

		// Let the two timed-out attempts land too: still one effect, the one the node reported.
		await sleep(HANG_MS + 500);
		expect(target.effectsOf(route)).toHaveLength(1);
		expect(success[0].id).toBe(target.effectsOf(route)[0].id);
		expect(await keyRecord(orderId)).toMatchObject({ status: 'succeeded', attempts: 3 });
		expect(
			await adminQuery(`SELECT id FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`, [
				orderId,
			]),
		).toEqual([]);
	});
});
