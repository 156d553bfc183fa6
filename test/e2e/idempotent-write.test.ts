import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { nodeOutputs } from '../../dev/harness/rest';
import { TestTarget } from '../../dev/target/server';
import { adminQuery } from '../helpers/store';
import {
	connect,
	packageNode,
	storeCredentialRef,
	trigger,
	webhookNode,
	workflow,
} from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

/** Webhook -> Idempotent HTTP Write to a target route, key = body.leadId, body = body.contact. */
const writeFlow = (
	id: string,
	path: string,
	route: string,
	extra: Record<string, unknown> = {},
	credentials?: Record<string, unknown>,
) => {
	const node = packageNode('idempotentHttpWrite', 'Create Contact', {
		method: 'POST',
		url: `={{ $json.body.targetUrl }}`,
		integration: 'crm',
		keyMode: 'custom',
		customKey: '={{ $json.body.leadId }}',
		jsonBody: '={{ $json.body.contact }}',
		retries: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.2, deadlineSeconds: 20, concurrency: 5 },
		onFailure: 'parkAndRoute',
		parkOptions: { owner: 'sales-ops', impact: 'lead not in CRM' },
		...extra,
	});
	if (credentials) node.credentials = credentials;
	return {
		route,
		flow: workflow(
			id,
			`Write: ${path}`,
			[webhookNode(path), node],
			connect(['Webhook', 'Create Contact']),
		),
	};
};

const flows = {
	main: writeFlow('writeMain', 'write-main', '/contacts'),
	deadStore: writeFlow(
		'writeDeadStore',
		'write-dead-store',
		'/contacts-dead-store',
		{},
		{ reliabilityStoreApi: { id: 'deadStore', name: 'Unreachable store' } },
	),
	// A conditional write: PUT with If-Match, the expected version from the delivery.
	conditional: writeFlow('writeConditional', 'write-conditional', '/invoice', {
		method: 'PUT',
		precondition: 'ifMatch',
		preconditionValue: '={{ $json.body.etag }}',
		retries: { baseDelaySeconds: 0.05, maxDelaySeconds: 0.1, deadlineSeconds: 20, maxAttempts: 2 },
	}),
	// n8n's own generic credential types, beside the store credential.
	bearer: writeFlow(
		'writeBearer',
		'write-bearer',
		'/contacts-bearer',
		{ authentication: 'httpBearerAuth' },
		{ ...storeCredentialRef, httpBearerAuth: { id: 'crmBearer', name: 'CRM token' } },
	),
	header: writeFlow(
		'writeHeader',
		'write-header',
		'/contacts-header',
		{ authentication: 'httpHeaderAuth' },
		{ ...storeCredentialRef, httpHeaderAuth: { id: 'crmHeader', name: 'CRM API key' } },
	),
};

describe.each(n8nVersionsUnderTest())('Idempotent HTTP Write in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const routeUrl = (route: string) => target.route(`/${version}${route}`, { honoursKey: true });
	const post = (
		flow: { flow: { id: string } },
		path: string,
		leadId: string | undefined,
		contact: unknown,
		route: string,
	) =>
		trigger(ctx!.n8n, flow.flow.id, path, {
			leadId,
			contact,
			targetUrl: target.url(`/${version}${route}`),
		});

	beforeAll(async () => {
		ctx = await startWithPackage(
			version,
			'write',
			[
				flows.main.flow,
				flows.deadStore.flow,
				flows.bearer.flow,
				flows.header.flow,
				flows.conditional.flow,
			],
			[
				{
					id: 'crmBearer',
					name: 'CRM token',
					type: 'httpBearerAuth',
					data: { token: 'bearer-token-42' },
				},
				{
					id: 'crmHeader',
					name: 'CRM API key',
					type: 'httpHeaderAuth',
					data: { name: 'X-Api-Key', value: 'key-42' },
				},
				{
					id: 'deadStore',
					name: 'Unreachable store',
					type: 'reliabilityStoreApi',
					data: {
						host: '127.0.0.1',
						port: 1,
						database: 'x',
						user: 'x',
						password: '',
						ssl: 'disable',
						schema: 'n8n_reliability',
						maxConnections: 1,
					},
				},
			],
		);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('a lost response after commit is retried with the same key and leaves exactly one effect', async () => {
		routeUrl('/lost');
		target.script(`/${version}/lost`, { reset: 'after' });
		const run = await post(flows.main, 'write-main', 'lead-lost', { name: 'Ana' }, '/lost');
		const [success, failed] = nodeOutputs(run, 'Create Contact');
		expect(failed).toEqual([]);
		expect(success[0]._reliability).toMatchObject({
			key: 'lead-lost',
			replayed: false,
			attempts: 2,
		});
		expect(target.effectsOf(`/${version}/lost`)).toHaveLength(1);
	});

	it('20 concurrent executions with one key send one request and all carry the same saved result', async () => {
		target.route(`/${version}/race`, { honoursKey: false, latencyMs: 500 });
		const runs = await Promise.all(
			Array.from({ length: 20 }, () =>
				post(flows.main, 'write-main', 'lead-race', { name: 'Bo' }, '/race'),
			),
		);
		expect(target.requestsTo(`/${version}/race`)).toHaveLength(1);
		expect(target.effectsOf(`/${version}/race`)).toHaveLength(1);
		const bodies = runs.map((run) => {
			const [success] = nodeOutputs(run, 'Create Contact');
			const body = { ...success[0] };
			delete body._reliability;
			return JSON.stringify(body);
		});
		expect(new Set(bodies).size).toBe(1);
		expect(JSON.parse(bodies[0])).toMatchObject({
			id: target.effectsOf(`/${version}/race`)[0].id,
			name: 'Bo',
		});
	});

	it('429 with Retry-After: 2 waits at least 2 s, then writes once', async () => {
		routeUrl('/limited');
		target.script(`/${version}/limited`, { status: 429, retryAfter: '2' });
		await post(flows.main, 'write-main', 'lead-429', { name: 'Cy' }, '/limited');
		const [first, second] = target.requestsTo(`/${version}/limited`);
		expect(second.at - first.at).toBeGreaterThanOrEqual(2_000);
		expect(target.effectsOf(`/${version}/limited`)).toHaveLength(1);
	});

	it('422 goes to Failed with the target message and is parked; fixed and replayed, exactly one effect', async () => {
		routeUrl('/strict');
		target.script(`/${version}/strict`, {
			status: 422,
			body: { message: 'phone: invalid format' },
		});
		const rejected = await post(flows.main, 'write-main', 'lead-422', { phone: '0151' }, '/strict');
		const [, failed] = nodeOutputs(rejected, 'Create Contact');
		expect(failed[0]).toMatchObject({
			class: 'permanent',
			status: 422,
			message: 'phone: invalid format',
			attempts: 1,
			key: 'lead-422',
		});
		expect(target.requestsTo(`/${version}/strict`)).toHaveLength(1);
		const parked = await adminQuery<{
			error_class: string;
			owner: string;
			payload: { body: { contact: unknown } };
		}>(`SELECT error_class, owner, payload FROM "${ctx!.schema}".dead_letters WHERE id = $1`, [
			failed[0].deadLetterId,
		]);
		expect(parked[0]).toMatchObject({
			error_class: 'permanent',
			owner: 'sales-ops',
			payload: { body: { contact: { phone: '0151' } } },
		});

		// Same key, different body after success: a conflict, nothing sent.
		const fixed = await post(flows.main, 'write-main', 'lead-422', { phone: '+49151' }, '/strict');
		expect(nodeOutputs(fixed, 'Create Contact')[0]).toHaveLength(1);
		const conflict = await post(
			flows.main,
			'write-main',
			'lead-422',
			{ phone: '+49999' },
			'/strict',
		);
		expect(nodeOutputs(conflict, 'Create Contact')[1][0]).toMatchObject({ class: 'conflict' });
		expect(target.requestsTo(`/${version}/strict`)).toHaveLength(2);
		expect(target.effectsOf(`/${version}/strict`).map((e) => e.body)).toEqual([
			{ phone: '+49151' },
		]);
	});

	it('with Postgres unreachable the node fails before sending anything', async () => {
		routeUrl('/never');
		const run = await trigger(ctx!.n8n, flows.deadStore.flow.id, 'write-dead-store', {
			leadId: 'lead-x',
			contact: { name: 'Di' },
			targetUrl: target.url(`/${version}/never`),
		});
		expect(run.status).toBe('error');
		expect(run.data.resultData.runData['Create Contact'][0].error!.message).toBe(
			'Reliability store unreachable at 127.0.0.1:1: connection refused',
		);
		expect(target.requestsTo(`/${version}/never`)).toHaveLength(0);
	});

	it('an old retry after a person changed the record is refused as a conflict and parked; the record keeps their value', async () => {
		const route = `/${version}/invoice`;
		target.route(route, { honoursKey: false, versioned: true });
		target.change(route, { amount: 100 }, 'import');
		target.script(route, { status: 503 }, { status: 503 });
		const deliver = () =>
			trigger(ctx!.n8n, flows.conditional.flow.id, 'write-conditional', {
				leadId: `${version}-INV-20931`,
				contact: { amount: 120 },
				etag: '"v1"',
				targetUrl: target.url(route),
			});
		const first = await deliver();
		expect(nodeOutputs(first, 'Create Contact')[1][0]).toMatchObject({ class: 'exhausted' });
		target.change(route, { amount: 90 }, 'maria');
		const retry = await deliver();
		const [conflict] = nodeOutputs(retry, 'Create Contact')[1];
		expect(conflict).toMatchObject({ class: 'conflict', status: 412 });
		expect(String(conflict.message)).toMatch(/expected If-Match: "v1", the target holds "v2"/);
		expect(target.records.get(route)).toMatchObject({ value: { amount: 90 }, writtenBy: 'maria' });
		const [parked] = await adminQuery<{ error_class: string; status: string }>(
			`SELECT error_class, status FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`,
			[`${version}-INV-20931`],
		);
		expect(parked).toEqual({ error_class: 'conflict', status: 'new' });
	});

	it("n8n's own Bearer and Header credentials authenticate the write at the target", async () => {
		routeUrl('/contacts-bearer');
		routeUrl('/contacts-header');
		const bearer = await post(
			flows.bearer,
			'write-bearer',
			'lead-bearer',
			{ name: 'Bea' },
			'/contacts-bearer',
		);
		const header = await post(
			flows.header,
			'write-header',
			'lead-header',
			{ name: 'Hed' },
			'/contacts-header',
		);
		expect(nodeOutputs(bearer, 'Create Contact')[1]).toEqual([]);
		expect(nodeOutputs(header, 'Create Contact')[1]).toEqual([]);
		const [bearerRequest] = target.requestsTo(`/${version}/contacts-bearer`);
		const [headerRequest] = target.requestsTo(`/${version}/contacts-header`);
		expect(bearerRequest.headers.authorization).toBe('Bearer bearer-token-42');
		expect(headerRequest.headers['x-api-key']).toBe('key-42');
		expect(target.effectsOf(`/${version}/contacts-bearer`)).toHaveLength(1);
		expect(target.effectsOf(`/${version}/contacts-header`)).toHaveLength(1);
	});

	it('a missing key is a clear per-item error naming the item index, and nothing is sent', async () => {
		routeUrl('/nokey');
		const run = await post(flows.main, 'write-main', undefined, { name: 'Ed' }, '/nokey');
		expect(run.status).toBe('error');
		expect(run.data.resultData.runData['Create Contact'][0].error!.message).toBe(
			'Item 0 has no idempotency key',
		);
		expect(target.requestsTo(`/${version}/nokey`)).toHaveLength(0);
	});

	it('while the integration is paused its writes are held, not sent', async () => {
		routeUrl('/paused');
		await adminQuery(
			`INSERT INTO "${ctx!.schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', 'crm', true, 'ops', 'outage')`,
		);
		try {
			const run = await post(flows.main, 'write-main', 'lead-paused', { name: 'Fe' }, '/paused');
			expect(nodeOutputs(run, 'Create Contact')[1][0]).toMatchObject({ class: 'paused' });
			const held = await adminQuery<{ status: string }>(
				`SELECT status FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'lead-paused'`,
			);
			expect(held).toEqual([{ status: 'held' }]);
			expect(target.requestsTo(`/${version}/paused`)).toHaveLength(0);
		} finally {
			await adminQuery(`UPDATE "${ctx!.schema}".pauses SET paused = false`);
		}
	});
});
