import { randomBytes } from 'node:crypto';
import {
	deleteRedisKeys,
	type N8nWorker,
	queueModeEnv,
	type QueueRedis,
} from '../../dev/harness/queue';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import {
	createDatabase,
	dropDatabase,
	type PgSettings,
	pgSettingsFromEnv,
	queryServer,
} from '../../dev/harness/postgres';
import { TestTarget } from '../../dev/target/server';
import { adminQuery } from '../helpers/store';
import { connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import { type E2eContext, startWith, stopAndClean } from './fixtures';

/**
 * Queue mode: one main n8n that takes the webhooks and two `n8n worker` processes that run the
 * executions, all sharing n8n's database on Postgres and a Bull queue on Redis. Every event is
 * delivered twice at the same moment, so the two copies usually run at once, often on different
 * workers. Event Dedupe lets exactly one copy through to the write; the other copy is reported to
 * a second target route, so both halves of the promise are visible at the destination.
 */
jest.setTimeout(900_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const EVENTS = 200;
/** Events whose two deliveries are in flight at once (so 2 x this many webhook calls). */
const SENDER_PARALLELISM = 20;
const FLOW = 'queueDedupeWrite';
const PATH = 'queue-events';
const CONSUMER = 'queue-orders';
const WORKERS = ['worker-a', 'worker-b'];

/**
 * Webhook -> Event Dedupe (claim the event id) -> New: Idempotent HTTP Write keyed by the event id,
 * with a header naming the worker that ran it (from the worker's environment); Duplicate: a plain
 * HTTP Request reporting the duplicate and why it was one.
 */
const queueFlow = (ordersUrl: string, duplicatesUrl: string) =>
	workflow(
		FLOW,
		'Queue mode: dedupe, then write once',
		[
			webhookNode(PATH),
			packageNode('eventDedupe', 'Event Dedupe', {
				operation: 'claim',
				eventId: '={{ $json.body.id }}',
				consumer: CONSUMER,
			}),
			packageNode(
				'idempotentHttpWrite',
				'Create Order',
				{
					method: 'POST',
					url: ordersUrl,
					integration: 'queue-orders',
					keyMode: 'custom',
					customKey: '={{ $json.body.id }}',
					jsonBody: '={{ $json.body }}',
					sendHeaders: true,
					headerParameters: {
						parameter: [{ name: 'X-Worker', value: '={{ $env.RELIABILITY_WORKER }}' }],
					},
					retries: {
						concurrency: 1,
						deadlineSeconds: 30,
						baseDelaySeconds: 0.1,
						maxDelaySeconds: 0.5,
					},
				},
				[520, -100],
			),
			{
				id: 'node-ReportDuplicate',
				name: 'Report Duplicate',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [520, 100],
				parameters: {
					method: 'POST',
					url: duplicatesUrl,
					sendBody: true,
					specifyBody: 'json',
					jsonBody:
						'={{ JSON.stringify({ id: $json._dedupe.eventId, reason: $json._dedupe.reason, worker: $env.RELIABILITY_WORKER }) }}',
					options: {},
				},
			},
		],
		connect(
			['Webhook', 'Event Dedupe'],
			['Event Dedupe', 'Create Order', 0],
			['Event Dedupe', 'Report Duplicate', 1],
		),
	);

/** Runs `work` over `items`, at most `limit` at once. */
async function eachLimited<T>(
	items: T[],
	limit: number,
	work: (item: T) => Promise<void>,
): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: limit }, async () => {
			while (next < items.length) await work(items[next++]);
		}),
	);
}

describe.each(n8nVersionsUnderTest())('queue mode with two workers in n8n %s', (version) => {
	const run = randomBytes(4).toString('hex');
	const server: PgSettings = pgSettingsFromEnv();
	const databaseName = `n8n_queue_${run}`;
	const redis: QueueRedis = { host: '127.0.0.1', port: 6379, prefix: `reliability_${run}` };
	const orders = `/${version}/queue/orders`;
	const duplicates = `/${version}/queue/duplicates`;
	let database: PgSettings | undefined;
	let ctx: E2eContext | undefined;
	const workers: N8nWorker[] = [];

	beforeAll(async () => {
		// A target with some latency, so the two copies of an event overlap inside the workers.
		target.route(orders, { honoursKey: true, latencyMs: 100 });
		target.route(duplicates, { honoursKey: false });
		database = await createDatabase(server, databaseName);
		// $env in expressions names the worker; n8n 2.x blocks $env unless told otherwise.
		const env = {
			...queueModeEnv(database, redis),
			N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
			RELIABILITY_WORKER: 'main',
		};
		ctx = await startWith(version, 'queue', {
			workflows: [queueFlow(target.url(orders), target.url(duplicates))],
			env,
		});
		// Started one after the other: two n8n boots at once on a small machine only take longer.
		for (const name of WORKERS)
			workers.push(
				await ctx.n8n.startWorker(name, { env: { RELIABILITY_WORKER: name }, concurrency: 10 }),
			);
	});

	afterAll(async () => {
		// Every step runs even when an earlier one fails: processes first, then their data.
		const steps: Array<() => Promise<unknown>> = [
			...workers.map((worker) => () => worker.kill()),
			() => stopAndClean(ctx),
			() => dropDatabase(server, databaseName),
			() => deleteRedisKeys(redis),
		];
		const errors: unknown[] = [];
		for (const step of steps) await step().catch((error: unknown) => errors.push(error));
		if (errors.length > 0) throw errors[0];
	});

	it('200 events, each delivered twice at once, across two workers: one write and one duplicate report per event', async () => {
		const events = Array.from({ length: EVENTS }, (_, i) => ({
			id: `${version}-evt-${i}`,
			amount: 10 + i,
		}));
		let accepted = 0;
		/** One delivery, as a sender makes it: a 503 (n8n busy, nothing accepted) is delivered again shortly. */
		const deliver = async (event: (typeof events)[number]): Promise<void> => {
			for (let attempt = 1; ; attempt++) {
				const answer = await ctx!.n8n.api.webhook(PATH, event);
				if (answer.status === 200) {
					accepted++;
					return;
				}
				if (answer.status !== 503 || attempt >= 20)
					throw new Error(
						`delivery of ${event.id} answered ${answer.status}: ${JSON.stringify(answer.body)}`,
					);
				await new Promise((resolve) => setTimeout(resolve, 500));
			}
		};
		await eachLimited(events, SENDER_PARALLELISM, async (event) => {
			await Promise.all([deliver(event), deliver(event)]);
		});
		expect(accepted).toBe(2 * EVENTS);

		// The webhook answers on receipt; the workers finish later. n8n's own table says when.
		const statuses = await waitFor(
			`${2 * EVENTS} finished executions in n8n's database`,
			async () => {
				const rows = await queryServer<{ status: string; n: number }>(
					database!,
					`SELECT status, count(*)::int AS n FROM execution_entity WHERE "workflowId" = $1 GROUP BY status`,
					[FLOW],
				);
				const finished = rows
					.filter((r) => !['new', 'running', 'waiting'].includes(r.status))
					.reduce((sum, r) => sum + r.n, 0);
				return finished >= 2 * EVENTS ? rows : undefined;
			},
			300_000,
			1_000,
		);
		expect(statuses).toEqual([{ status: 'success', n: 2 * EVENTS }]);

		// At the target: exactly one request and one effect per event, 200 in all.
		for (const event of events) expect(target.effectsOf(orders, event.id)).toHaveLength(1);
		expect(target.effectsOf(orders)).toHaveLength(EVENTS);
		expect(target.requestsTo(orders)).toHaveLength(EVENTS);
		// The other copy of every event was stopped by Event Dedupe and reported once.
		const reported = target.effectsOf(duplicates).map((e) => (e.body as { id: string }).id);
		expect(reported.sort()).toEqual(events.map((e) => e.id).sort());
		// Both workers ran executions: the writes carry the name of the worker that sent them.
		const writers = new Set(target.requestsTo(orders).map((r) => r.headers['x-worker']));
		expect([...writers].sort()).toEqual(WORKERS);

		// In the store: one done claim and one succeeded key per event, made by the same execution.
		const claims = await adminQuery<{ event_id: string; status: string; execution_id: string }>(
			`SELECT event_id, status, execution_id FROM "${ctx!.schema}".processed_events WHERE consumer = $1`,
			[CONSUMER],
		);
		const keys = await adminQuery<{
			key: string;
			status: string;
			attempts: number;
			execution_id: string;
		}>(`SELECT key, status, attempts, execution_id FROM "${ctx!.schema}".idempotency_keys`);
		expect(claims).toHaveLength(EVENTS);
		expect(keys).toHaveLength(EVENTS);
		const keyByEvent = new Map(keys.map((k) => [k.key, k]));
		for (const claim of claims) {
			expect(claim.status).toBe('done');
			expect(keyByEvent.get(claim.event_id)).toEqual({
				key: claim.event_id,
				status: 'succeeded',
				attempts: 1,
				execution_id: claim.execution_id,
			});
		}
		expect(await adminQuery(`SELECT id FROM "${ctx!.schema}".dead_letters`)).toEqual([]);
	});
});
