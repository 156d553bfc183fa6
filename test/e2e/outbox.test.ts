import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { CredentialFile, WorkflowFile } from '../../dev/harness/n8n';
import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { clientConfig, pgSettingsFromEnv } from '../../dev/harness/postgres';
import { adminQuery } from '../helpers/store';
import { TestTarget } from '../../dev/target/server';
import { bundledWorkflows } from '../../dev/bundled';
import {
	codeNode,
	connect,
	packageNode,
	trigger,
	webhookNode,
	workflow,
} from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * The Transactional Outbox in real n8n: orders and their "order placed" messages written in one
 * transaction, sent by the bundled Outbox relay. n8n is killed between the commit and the send
 * and while a send hangs; two relays run at once on an outbox in a business database of its
 * own; a failed send is retried and a rejected one parked. Each test ends by reading the target's
 * effects (per Idempotency-Key) and the outbox rows.
 */
jest.setTimeout(900_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const RELAY = 'relOutboxRelay01';
const WRITER = 'outboxWriteOrders';
const LENIENT_WRITER = 'outboxWriteOrdersLenient';
const APP_WRITER = 'outboxWriteAppOrders';
const ONCE_WRITER = 'outboxWriteOrdersOnce';
const APP_RELAY_A = 'outboxAppRelayA';
const APP_RELAY_B = 'outboxAppRelayB';
const POSTGRES_CREDENTIAL_ID = 'outboxbusinessdb1';

const settings = pgSettingsFromEnv();

/** Rows of a database other than the default one (the business database). */
async function queryDatabase<R>(
	database: string,
	sql: string,
	values: unknown[] = [],
): Promise<R[]> {
	const client = new Client(clientConfig({ ...settings, database }));
	await client.connect();
	try {
		return (await client.query(sql, values)).rows as R[];
	} finally {
		await client.end();
	}
}

/** Webhook -> one item per order -> Write (order row + message) -> a follow-up that may take a while. */
function writerFlow(
	id: string,
	path: string,
	table: string,
	outbox: Record<string, unknown> = {},
	credentials: Record<string, unknown> = {},
	onError?: string,
): WorkflowFile {
	const write = packageNode(
		'transactionalOutbox',
		'Place Order',
		{
			operation: 'write',
			...outbox,
			statements: {
				statement: [
					{
						query: `INSERT INTO ${table} (id, customer, amount) VALUES ($1, $2, $3)`,
						queryParameters: '={{ $json.orderId }}, {{ $json.customer }}, {{ $json.amount }}',
					},
				],
			},
			messagesInput: 'fields',
			messages: {
				message: [
					{
						destination: 'orders',
						method: 'POST',
						url: '={{ $json.url }}',
						idempotencyKey: "={{ 'order:' + $json.orderId + ':placed' }}",
						orderingKey: '={{ $json.customer }}',
						body: '={{ { orderId: $json.orderId, customer: $json.customer, seq: $json.seq } }}',
						headers: '{}',
					},
				],
			},
		},
		[520, 0],
	);
	write.credentials = { ...(write.credentials as object), ...credentials };
	if (onError) write.onError = onError;
	return workflow(
		id,
		`Outbox test: ${path}`,
		[
			webhookNode(path),
			codeNode(
				'Split',
				'return $input.first().json.body.orders.map((order) => ({ json: order }));',
			),
			write,
			codeNode(
				'Follow-up',
				"const ms = $('Webhook').first().json.body.pauseMs ?? 0;\nawait new Promise((resolve) => setTimeout(resolve, ms));\nreturn $input.all();",
				[780, 0],
			),
		],
		connect(['Webhook', 'Split'], ['Split', 'Place Order'], ['Place Order', 'Follow-up']),
	);
}

/** The bundled relay as shipped, with the settings a test changes (and a copy's own id and path). */
function relayFlow(
	change: {
		id?: string;
		path?: string;
		leaseSeconds?: number;
		sendDeadlineSeconds?: number;
		maxAttempts?: number;
		outbox?: Record<string, unknown>;
		credentials?: Record<string, unknown>;
	} = {},
): WorkflowFile {
	const shipped = bundledWorkflows('http://127.0.0.1:5680').find((w) => w.id === RELAY)!;
	const relay = JSON.parse(JSON.stringify(shipped)) as WorkflowFile;
	const nodes = relay.nodes as Array<{
		name: string;
		webhookId?: string;
		parameters: { retries?: Record<string, unknown> } & Record<string, unknown>;
		credentials: Record<string, unknown>;
	}>;
	relay.id = change.id ?? RELAY;
	if (change.id) {
		relay.name = `${relay.name} (${change.id})`;
		// The shipped relay keeps no successful run; a copy keeps them, so that a test can tell
		// which relay took a message by the execution that took it.
		relay.settings = { ...relay.settings, saveDataSuccessExecution: 'all' };
	}
	const node = (name: string) => nodes.find((n) => n.name === name)!;
	if (change.path) {
		node('Send Now').parameters.path = change.path;
		node('Send Now').webhookId = randomUUID();
	}
	if (change.leaseSeconds) node('Take Messages').parameters.leaseSeconds = change.leaseSeconds;
	if (change.sendDeadlineSeconds)
		node('Send Message').parameters.retries!.deadlineSeconds = change.sendDeadlineSeconds;
	if (change.maxAttempts)
		node('Retry or Park').parameters.failOptions = { maxAttempts: change.maxAttempts };
	for (const name of ['Take Messages', 'Mark Sent', 'Retry or Park']) {
		Object.assign(node(name).parameters, change.outbox ?? {});
		Object.assign(node(name).credentials, change.credentials ?? {});
	}
	return relay;
}

interface MessageRow {
	idempotency_key: string;
	status: string;
	generation: number;
	attempts: number;
	taken_by: string | null;
	superseded_count: number;
	dead_letter_id: string | null;
}

const messageColumns =
	'idempotency_key, status, generation, attempts, taken_by, superseded_count, dead_letter_id';

describe.each(n8nVersionsUnderTest())('Transactional Outbox in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const suffix = randomBytes(4).toString('hex');
	const bizSchema = `e2e_outbox_biz_${suffix}`;
	const appDatabase = `e2e_outbox_app_${suffix}`;
	const route = (name: string) => `/${version}/outbox/${name}`;
	const messages = async (where = 'true', values: unknown[] = []) =>
		await adminQuery<MessageRow>(
			`SELECT ${messageColumns} FROM "${ctx!.schema}".outbox_messages WHERE ${where} ORDER BY id`,
			values,
		);
	const placeOrders = async (
		orders: Array<Record<string, unknown>>,
		pauseMs = 0,
		path = 'outbox-orders',
	) => {
		const answer = await ctx!.n8n.api.webhook(path, { orders, pauseMs });
		expect(answer.status).toBe(200);
	};

	beforeAll(async () => {
		await adminQuery(`CREATE SCHEMA ${bizSchema}`);
		await adminQuery(
			`CREATE TABLE ${bizSchema}.orders (id text PRIMARY KEY, customer text NOT NULL, amount integer NOT NULL)`,
		);
		await adminQuery(`CREATE DATABASE ${appDatabase}`);
		await queryDatabase(
			appDatabase,
			'CREATE TABLE public.orders (id text PRIMARY KEY, customer text NOT NULL, amount integer NOT NULL)',
		);
		const postgres: CredentialFile = {
			id: POSTGRES_CREDENTIAL_ID,
			name: 'Business database',
			type: 'postgres',
			data: {
				...settings,
				database: appDatabase,
				ssl: 'disable',
				allowUnauthorizedCerts: false,
				sshTunnel: false,
				maxConnections: 100,
			},
		};
		const appOutbox = { outboxDatabase: 'postgres', outboxSchema: 'app_outbox' };
		const appCredential = { postgres: { id: POSTGRES_CREDENTIAL_ID, name: 'Business database' } };
		target.route(route('crash'), { honoursKey: true });
		target.route(route('hang'), { honoursKey: true });
		target.route(route('app'), { honoursKey: true, latencyMs: 30 });
		target.route(route('retry'), { honoursKey: true });
		target.route(route('reject'), { honoursKey: true });
		target.route(route('once'), { honoursKey: true });
		ctx = await startWithPackage(
			version,
			'outbox',
			[
				writerFlow(WRITER, 'outbox-orders', `${bizSchema}.orders`),
				writerFlow(APP_WRITER, 'outbox-app-orders', 'public.orders', appOutbox, appCredential),
				writerFlow(ONCE_WRITER, 'outbox-orders-once', `${bizSchema}.orders`, {
					handleOnce: true,
					eventId: '={{ $json.orderId }}',
					consumer: 'orders-in',
				}),
				writerFlow(
					LENIENT_WRITER,
					'outbox-orders-lenient',
					`${bizSchema}.orders`,
					{},
					{},
					'continueRegularOutput',
				),
				// Short leases and deadlines, so a takeover after the kill happens within the test.
				relayFlow({ leaseSeconds: 10, sendDeadlineSeconds: 5, maxAttempts: 10 }),
				relayFlow({
					id: APP_RELAY_A,
					path: 'outbox-app-relay-a',
					leaseSeconds: 60,
					outbox: appOutbox,
					credentials: appCredential,
				}),
				relayFlow({
					id: APP_RELAY_B,
					path: 'outbox-app-relay-b',
					leaseSeconds: 60,
					outbox: appOutbox,
					credentials: appCredential,
				}),
			],
			[postgres],
			// The relays are not running yet: the first test writes, then kills n8n before any send.
			[WRITER, APP_WRITER, LENIENT_WRITER, ONCE_WRITER],
		);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
		await adminQuery(`DROP SCHEMA IF EXISTS ${bizSchema} CASCADE`);
		await adminQuery(`DROP DATABASE IF EXISTS ${appDatabase} WITH (FORCE)`);
	});

	it('n8n killed after the commit, before the send: after the restart the relay sends each message exactly once', async () => {
		const orders = Array.from({ length: 6 }, (_, i) => ({
			orderId: `${version}-crash-${i}`,
			customer: `c${i % 2}`,
			seq: i,
			amount: 100 + i,
			url: target.url(route('crash')),
		}));
		// The execution commits its orders and messages, then stays in a slow follow-up step.
		await placeOrders(orders, 120_000);
		await waitFor(
			'the orders to commit',
			async () =>
				(
					await adminQuery(`SELECT 1 FROM ${bizSchema}.orders WHERE id LIKE $1`, [
						`${version}-crash-%`,
					])
				).length === orders.length
					? true
					: undefined,
			60_000,
			100,
		);
		await ctx!.n8n.kill();

		expect((await messages()).map((m) => [m.status, m.generation])).toEqual(
			orders.map(() => ['pending', 0]),
		);
		expect(target.requestsTo(route('crash'))).toEqual([]);

		await ctx!.n8n.activateWorkflows([RELAY, APP_RELAY_A, APP_RELAY_B]);
		await ctx!.n8n.start();
		await ctx!.n8n.api.login();
		await waitFor(
			'the relay to send every message',
			async () => ((await messages(`status <> 'done'`)).length === 0 ? true : undefined),
			120_000,
			500,
		);

		for (const order of orders) {
			const key = `order:${order.orderId}:placed`;
			expect(target.effectsOf(route('crash'), key)).toHaveLength(1);
			expect(target.requestsTo(route('crash')).filter((r) => r.key === key)).toHaveLength(1);
			expect(target.effectsOf(route('crash'), key)[0].body).toEqual({
				orderId: order.orderId,
				customer: order.customer,
				seq: order.seq,
			});
		}
		const rows = await messages();
		expect(rows.map((m) => [m.status, m.generation])).toEqual(orders.map(() => ['done', 1]));
	});

	it('n8n killed while a send hangs: the message is taken over after its lease and has one effect at the target', async () => {
		const key = `order:${version}-hang-1:placed`;
		// The target holds the next request for 8 s, then commits it (the effect happens).
		target.script(route('hang'), { delayMs: 8_000 });
		await placeOrders([
			{
				orderId: `${version}-hang-1`,
				customer: 'h',
				seq: 1,
				amount: 5,
				url: target.url(route('hang')),
			},
		]);
		await waitFor(
			'the relay to send the message',
			async () => (target.requestsTo(route('hang')).some((r) => r.key === key) ? true : undefined),
			60_000,
			50,
		);
		await ctx!.n8n.kill();
		const [inFlight] = await messages('idempotency_key = $1', [key]);
		expect(inFlight).toMatchObject({ status: 'in_flight', generation: 1 });

		await ctx!.n8n.start();
		await ctx!.n8n.api.login();
		await waitFor(
			'the message to be sent again and completed',
			async () =>
				(await messages(`idempotency_key = $1 AND status = 'done'`, [key])).length === 1
					? true
					: undefined,
			240_000,
			1_000,
		);

		expect(target.effectsOf(route('hang'), key)).toHaveLength(1);
		// Sent again after the takeover, with the same key: the target answered from its record.
		expect(target.requestsTo(route('hang')).filter((r) => r.key === key).length).toBeGreaterThan(1);
		const [row] = await messages('idempotency_key = $1', [key]);
		expect(row.generation).toBeGreaterThan(1);
		expect(row.dead_letter_id).toBeNull();
		const keys = await adminQuery<{ status: string }>(
			`SELECT status FROM "${ctx!.schema}".idempotency_keys WHERE key = $1`,
			[key],
		);
		expect(keys).toEqual([{ status: 'succeeded' }]);
	});

	it('two relays at once on an outbox in the business database: every message sent once, in order per ordering key', async () => {
		const customers = ['ana', 'ben', 'cem'];
		const orders = customers.flatMap((customer) =>
			Array.from({ length: 8 }, (_, seq) => ({
				orderId: `${version}-app-${customer}-${seq}`,
				customer,
				seq,
				amount: seq,
				url: target.url(route('app')),
			})),
		);
		// Written in an interleaved order, so each customer's messages are spread over the ids.
		orders.sort((a, b) => a.seq - b.seq);
		await placeOrders(orders, 0, 'outbox-app-orders');

		const appMessages = () =>
			queryDatabase<MessageRow>(
				appDatabase,
				`SELECT ${messageColumns} FROM app_outbox.outbox_messages ORDER BY id`,
			);
		await waitFor(
			'both relays to send every message',
			async () => {
				await Promise.all([
					ctx!.n8n.api.webhook('outbox-app-relay-a', {}),
					ctx!.n8n.api.webhook('outbox-app-relay-b', {}),
				]);
				const rows = await appMessages();
				return rows.length === orders.length && rows.every((r) => r.status === 'done')
					? rows
					: undefined;
			},
			180_000,
			1_000,
		);

		const received = target.requestsTo(route('app'));
		expect(received).toHaveLength(orders.length);
		for (const order of orders)
			expect(target.effectsOf(route('app'), `order:${order.orderId}:placed`)).toHaveLength(1);
		for (const customer of customers) {
			const sequence = target
				.effectsOf(route('app'))
				.filter((e) => (e.body as { customer: string }).customer === customer)
				.map((e) => (e.body as { seq: number }).seq);
			expect(sequence).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
		}

		const rows = await appMessages();
		expect(rows.every((r) => r.status === 'done' && r.generation === 1)).toBe(true);
		expect(rows.every((r) => r.superseded_count === 0)).toBe(true);
		const executionsOf = async (id: string) =>
			new Set((await ctx!.n8n.api.executions(id)).map((e) => String(e.id)));
		const [byA, byB] = [await executionsOf(APP_RELAY_A), await executionsOf(APP_RELAY_B)];
		expect(rows.filter((r) => byA.has(String(r.taken_by))).length).toBeGreaterThan(0);
		expect(rows.filter((r) => byB.has(String(r.taken_by))).length).toBeGreaterThan(0);

		const business = await queryDatabase<{ n: number }>(
			appDatabase,
			'SELECT count(*)::int AS n FROM public.orders',
		);
		expect(business).toEqual([{ n: orders.length }]);
		// The outbox lives in the business database: none of it went to the store.
		expect(await messages(`idempotency_key LIKE $1`, [`order:${version}-app-%`])).toEqual([]);
	});

	it('a failed send is retried and then sent once; a rejected one is parked with the message as payload', async () => {
		target.script(route('retry'), { status: 503 });
		target.script(route('reject'), { status: 422, body: { message: 'customer number unknown' } });
		const retryKey = `order:${version}-retry-1:placed`;
		const rejectKey = `order:${version}-reject-1:placed`;
		await placeOrders([
			{
				orderId: `${version}-retry-1`,
				customer: 'r',
				seq: 1,
				amount: 1,
				url: target.url(route('retry')),
			},
			{
				orderId: `${version}-reject-1`,
				customer: 'x',
				seq: 1,
				amount: 2,
				url: target.url(route('reject')),
			},
		]);
		await waitFor(
			'both messages to settle',
			async () => {
				await ctx!.n8n.api.webhook('reliability-outbox-relay', {});
				const rows = await messages('idempotency_key = ANY($1)', [[retryKey, rejectKey]]);
				return rows.length === 2 && rows.every((r) => ['done', 'dead'].includes(r.status))
					? rows
					: undefined;
			},
			120_000,
			2_000,
		);

		const [retried] = await messages('idempotency_key = $1', [retryKey]);
		expect(retried).toMatchObject({
			status: 'done',
			generation: 2,
			attempts: 2,
			dead_letter_id: null,
		});
		expect(target.effectsOf(route('retry'), retryKey)).toHaveLength(1);
		expect(target.requestsTo(route('retry')).filter((r) => r.key === retryKey)).toHaveLength(2);

		const [rejected] = await messages('idempotency_key = $1', [rejectKey]);
		expect(rejected).toMatchObject({ status: 'dead', generation: 1 });
		expect(target.effectsOf(route('reject'), rejectKey)).toEqual([]);
		const [letter] = await adminQuery<Record<string, unknown>>(
			`SELECT * FROM "${ctx!.schema}".dead_letters WHERE id = $1`,
			[rejected.dead_letter_id],
		);
		expect(letter).toMatchObject({
			idempotency_key: rejectKey,
			error_class: 'permanent',
			error_status: 422,
			integration: 'orders',
			step: 'Send Message (orders)',
			workflow_id: RELAY,
			status: 'new',
		});
		expect(letter.payload).toMatchObject({
			destination: 'orders',
			method: 'POST',
			url: target.url(route('reject')),
			idempotencyKey: rejectKey,
			body: { orderId: `${version}-reject-1`, customer: 'x', seq: 1 },
		});
	});
	it('a failing statement leaves neither the row nor the message: the run fails naming the item, or, continuing on fail, that item alone is an error', async () => {
		const order = (id: string) => ({
			orderId: `${version}-${id}`,
			customer: 'v',
			seq: 1,
			amount: 3,
			url: target.url(route('retry')),
		});
		const failed = await trigger(ctx!.n8n, WRITER, 'outbox-orders', {
			// The second order repeats an order of the first test: its INSERT fails.
			orders: [order('strict-a'), order('crash-0'), order('strict-c')],
		});
		expect(failed.status).toBe('error');
		expect(failed.data.resultData.error?.message).toMatch(
			/^Item 1: statement 1 failed: duplicate key value violates unique constraint/,
		);
		const lenient = await trigger(ctx!.n8n, LENIENT_WRITER, 'outbox-orders-lenient', {
			orders: [order('lenient-a'), order('crash-1'), order('lenient-c')],
		});
		expect(lenient.status).toBe('success');
		const [written] = nodeOutputs(lenient, 'Place Order');
		expect(written.map((item) => item.orderId ?? item.itemIndex)).toEqual([
			`${version}-lenient-a`,
			1,
			`${version}-lenient-c`,
		]);
		expect(written[1].error).toMatch(/^Item 1: statement 1 failed: duplicate key/);
		expect(written[1].description).toMatch(/Nothing of this item was written/);

		const orders = await adminQuery<{ id: string }>(
			`SELECT id FROM ${bizSchema}.orders WHERE id LIKE $1 OR id LIKE $2 ORDER BY id`,
			[`${version}-strict-%`, `${version}-lenient-%`],
		);
		expect(orders.map((o) => o.id)).toEqual([`${version}-lenient-a`, `${version}-lenient-c`]);
		const rows = await messages('idempotency_key LIKE $1 OR idempotency_key LIKE $2', [
			`order:${version}-strict-%`,
			`order:${version}-lenient-%`,
		]);
		expect(rows.map((r) => r.idempotency_key)).toEqual([
			`order:${version}-lenient-a:placed`,
			`order:${version}-lenient-c:placed`,
		]);
		// The repeated orders' messages are still the first test's, sent once.
		expect(target.effectsOf(route('crash'), `order:${version}-crash-1:placed`)).toHaveLength(1);
	});

	it('Handle Each Event Once: a redelivered order writes neither its row nor its message again', async () => {
		const order = (id: string) => ({
			orderId: `${version}-once-${id}`,
			customer: 'o',
			seq: 1,
			amount: 7,
			url: target.url(route('once')),
		});
		const first = await trigger(ctx!.n8n, ONCE_WRITER, 'outbox-orders-once', {
			orders: [order('a'), order('a'), order('b')],
		});
		expect(first.status).toBe('success');
		const again = await trigger(ctx!.n8n, ONCE_WRITER, 'outbox-orders-once', {
			orders: [order('a'), order('b'), order('c')],
		});
		expect(again.status).toBe('success');
		const [firstOut] = nodeOutputs(first, 'Place Order');
		const [againOut] = nodeOutputs(again, 'Place Order');
		const duplicates = (items: Array<Record<string, unknown>>) =>
			items.map((item) => (item._outbox as { duplicate?: boolean }).duplicate === true);
		expect(duplicates(firstOut)).toEqual([false, true, false]);
		expect(duplicates(againOut)).toEqual([true, true, false]);

		const orders = await adminQuery<{ id: string }>(
			`SELECT id FROM ${bizSchema}.orders WHERE id LIKE $1 ORDER BY id`,
			[`${version}-once-%`],
		);
		expect(orders.map((o) => o.id)).toEqual(['a', 'b', 'c'].map((id) => `${version}-once-${id}`));
		const rows = await messages('idempotency_key LIKE $1', [`order:${version}-once-%`]);
		expect(rows.map((r) => r.idempotency_key)).toEqual(
			['a', 'b', 'c'].map((id) => `order:${version}-once-${id}:placed`),
		);
		const events = await adminQuery<{ event_id: string; status: string }>(
			`SELECT event_id, status FROM "${ctx!.schema}".processed_events WHERE consumer = 'orders-in' AND event_id LIKE $1 ORDER BY event_id`,
			[`${version}-once-%`],
		);
		expect(events).toEqual(
			['a', 'b', 'c'].map((id) => ({ event_id: `${version}-once-${id}`, status: 'done' })),
		);
	});
});
