import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MASKED as MASK } from '../../lib/masking';
import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { adminQuery } from '../helpers/store';
import {
	connect,
	packageNode,
	trigger,
	webhookInto,
	webhookNode,
	workflow,
} from '../../dev/workflows';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

/** A CRM that rejects every contact, as the worked example's does for local phone numbers. */
let crm: Server;
let crmUrl = '';
const crmRequests: unknown[] = [];

beforeAll(async () => {
	crm = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += chunk));
		request.on('end', () => {
			crmRequests.push(JSON.parse(body || 'null'));
			response.writeHead(422, { 'content-type': 'application/json' });
			response.end(JSON.stringify({ message: 'phone: invalid format, expected +<country code>' }));
		});
	});
	await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
	crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}/contacts`;
});

afterAll(async () => {
	await new Promise((resolve) => crm.close(resolve));
});

const LEADS = 'dlqLeadsFlow';
const leadsFlow = () =>
	workflow(
		LEADS,
		'Leads into the CRM, failures parked',
		[
			webhookNode('dlq-leads'),
			{
				id: 'node-CrmUpsert',
				name: 'CRM Upsert',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [260, 0],
				onError: 'continueErrorOutput',
				parameters: {
					method: 'POST',
					url: crmUrl,
					sendBody: true,
					specifyBody: 'json',
					jsonBody: '={{ JSON.stringify($json.body) }}',
					options: {},
				},
			},
			packageNode(
				'deadLetterPark',
				'Park',
				{
					operation: 'park',
					idempotencyKey: '={{ $json.body.leadId }}:crm-create',
					parkOptions: {
						integration: 'crm',
						owner: 'sales-ops',
						impact: 'lead not in CRM',
						alreadyHappened: 'enriched, not in CRM',
						maskFields: 'apiToken',
					},
				},
				[520, 100],
			),
		],
		connect(['Webhook', 'CRM Upsert'], ['CRM Upsert', 'Park', 1]),
	);

const ops = [
	webhookInto(
		'dlqGet',
		'dlq-get',
		packageNode('deadLetterPark', 'Get', {
			operation: 'get',
			findBy: 'id',
			deadLetterId: '={{ $json.body.id }}',
		}),
	),
	webhookInto(
		'dlqStatus',
		'dlq-status',
		packageNode('deadLetterPark', 'Update Status', {
			operation: 'updateStatus',
			targetId: '={{ $json.body.id }}',
			newStatus: '={{ $json.body.status }}',
			actor: '={{ $json.body.actor }}',
			reason: '={{ $json.body.reason }}',
		}),
	),
	webhookInto(
		'dlqStats',
		'dlq-stats',
		packageNode('deadLetterPark', 'Stats', { operation: 'stats', days: 30 }),
	),
	webhookInto(
		'dlqPurge',
		'dlq-purge',
		packageNode('deadLetterPark', 'Purge', { operation: 'purge' }),
	),
	webhookInto(
		'ctlPause',
		'ctl-pause',
		packageNode('reliabilityControl', 'Pause', {
			resource: 'pause',
			operation: 'pause',
			scope: 'integration',
			pauseName: '={{ $json.body.name }}',
			actor: '={{ $json.body.actor }}',
			reason: '={{ $json.body.reason }}',
		}),
	),
	webhookInto(
		'ctlResume',
		'ctl-resume',
		packageNode('reliabilityControl', 'Resume', {
			resource: 'pause',
			operation: 'resume',
			scope: 'integration',
			pauseName: '={{ $json.body.name }}',
			actor: '={{ $json.body.actor }}',
			reason: '={{ $json.body.reason }}',
		}),
	),
	webhookInto(
		'hbBeat',
		'hb-beat',
		packageNode('reliabilityControl', 'Beat', {
			resource: 'heartbeat',
			operation: 'beat',
			heartbeatName: '={{ $json.body.name }}',
			schedule: 'period',
			periodMinutes: '={{ $json.body.periodMinutes }}',
			graceMinutes: 60,
		}),
	),
	webhookInto(
		'hbCheck',
		'hb-check',
		packageNode('reliabilityControl', 'Check', { resource: 'heartbeat', operation: 'check' }),
	),
];

describe.each(n8nVersionsUnderTest())('Dead Letter Park and controls in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const get = async (id: string) =>
		nodeOutputs(await trigger(ctx!.n8n, 'dlqGet', 'dlq-get', { id }), 'Get')[0][0];

	beforeAll(async () => {
		ctx = await startWithPackage(version, 'dlq', [leadsFlow(), ...ops]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	let parkedId = '';

	it('an item from an error output is parked, and comes back from Get byte for byte with secrets masked', async () => {
		const lead = {
			leadId: 'lead-1',
			name: 'Ana Lima',
			phone: '0151 2345678',
			apiToken: 'tok_live_1',
			nested: { z: 1, a: [3, 2, 1], price: 10.5 },
		};
		const run = await trigger(ctx!.n8n, LEADS, 'dlq-leads', lead, {
			authorization: 'Bearer sk_live_secret',
			cookie: 'session=abc',
		});
		const [parked] = nodeOutputs(run, 'Park')[0];
		parkedId = (parked._deadLetter as { id: string }).id;
		expect(parked._deadLetter).toMatchObject({
			status: 'new',
			failureCount: 1,
			created: true,
			runLink: `${ctx!.n8n.baseUrl}/workflow/${LEADS}/executions/${run.id}`,
		});

		// What the webhook handed the workflow, as n8n recorded it, with the secrets masked.
		const received = nodeOutputs(run, 'Webhook')[0][0];
		const expected = {
			...received,
			headers: { ...(received.headers as object), authorization: MASK, cookie: MASK },
			body: { ...(received.body as object), apiToken: MASK },
		};
		const record = await get(parkedId);
		expect(JSON.stringify(record.payload)).toBe(JSON.stringify(expected));
		expect(record).toMatchObject({
			step: 'CRM Upsert',
			workflowId: LEADS,
			executionId: run.id,
			idempotencyKey: 'lead-1:crm-create',
			errorClass: 'permanent',
			errorStatus: 422,
			owner: 'sales-ops',
			impact: 'lead not in CRM',
			alreadyHappened: 'enriched, not in CRM',
			runLink: `${ctx!.n8n.baseUrl}/workflow/${LEADS}/executions/${run.id}`,
		});
		expect(String(record.errorMessage)).toContain('phone: invalid format');
		// One camelCase record: the store's own bookkeeping stays in the store.
		expect(record).not.toHaveProperty('item_key');
		expect(record).not.toHaveProperty('error_class');
		const stored = await adminQuery<{ text: string }>(
			`SELECT payload::text AS text FROM "${ctx!.schema}".dead_letters`,
		);
		expect(stored.map((r) => r.text).join()).not.toMatch(/sk_live_secret|session=abc|tok_live_1/);
	});

	it('the same item failing again updates its record instead of adding one', async () => {
		await trigger(ctx!.n8n, LEADS, 'dlq-leads', {
			leadId: 'lead-1',
			name: 'Ana Lima',
			phone: '0151 2345678',
		});
		const record = await get(parkedId);
		expect(record.failureCount).toBe(2);
		expect(await adminQuery(`SELECT id FROM "${ctx!.schema}".dead_letters`)).toHaveLength(1);
	});

	it('a status change without an actor is refused and changes nothing; with one it is in the history', async () => {
		const refused = await trigger(ctx!.n8n, 'dlqStatus', 'dlq-status', {
			id: parkedId,
			status: 'being_fixed',
			actor: '',
		});
		expect(refused.status).toBe('error');
		expect(refused.data.resultData.runData['Update Status'][0].error!.message).toBe(
			`Changing dead letter ${parkedId} to being_fixed needs an actor`,
		);
		expect((await get(parkedId)).status).toBe('new');

		const noReason = await trigger(ctx!.n8n, 'dlqStatus', 'dlq-status', {
			id: parkedId,
			status: 'resolved',
			actor: 'maria@sales-ops',
		});
		expect(noReason.status).toBe('error');

		await trigger(ctx!.n8n, 'dlqStatus', 'dlq-status', {
			id: parkedId,
			status: 'being_fixed',
			actor: 'maria@sales-ops',
		});
		await trigger(ctx!.n8n, 'dlqStatus', 'dlq-status', {
			id: parkedId,
			status: 'resolved',
			actor: 'maria@sales-ops',
			reason: 'added the country code by hand in the CRM',
		});
		const record = await get(parkedId);
		expect(record.status).toBe('resolved');
		expect(
			(record.history as Array<Record<string, unknown>>).map((e) => [
				e.actor,
				e.fromStatus,
				e.toStatus,
				e.reason,
			]),
		).toEqual([
			['n8n', null, 'new', expect.stringContaining('phone: invalid format')],
			['maria@sales-ops', 'new', 'being_fixed', null],
			['maria@sales-ops', 'being_fixed', 'resolved', 'added the country code by hand in the CRM'],
		]);
	});

	it("pause holds the integration's failures; resume moves them to replay requested", async () => {
		const paused = await trigger(ctx!.n8n, 'ctlPause', 'ctl-pause', {
			name: 'crm',
			actor: 'ops-lead',
			reason: 'CRM vendor outage',
		});
		expect(nodeOutputs(paused, 'Pause')[0][0]).toMatchObject({
			paused: true,
			changedBy: 'ops-lead',
			reason: 'CRM vendor outage',
		});
		const run = await trigger(ctx!.n8n, LEADS, 'dlq-leads', { leadId: 'lead-2', phone: '0170 1' });
		const heldId = nodeOutputs(run, 'Park')[0][0]._deadLetter as { id: string; status: string };
		expect(heldId.status).toBe('held');

		const resumed = await trigger(ctx!.n8n, 'ctlResume', 'ctl-resume', {
			name: 'crm',
			actor: 'ops-lead',
			reason: 'vendor is back',
		});
		expect(nodeOutputs(resumed, 'Resume')[0][0]).toMatchObject({ paused: false, released: 1 });
		const record = await get(heldId.id);
		expect(record.status).toBe('replay_requested');
		expect((record.history as Array<Record<string, unknown>>).at(-1)).toMatchObject({
			actor: 'ops-lead',
			fromStatus: 'held',
			toStatus: 'replay_requested',
		});
	});

	it('Stats returns the exact numbers of the store', async () => {
		const stats = nodeOutputs(await trigger(ctx!.n8n, 'dlqStats', 'dlq-stats', {}), 'Stats')[0][0];
		expect(stats).toMatchObject({
			openCount: 1,
			openByStatus: { replay_requested: 1 },
			openByWorkflow: [
				{ workflowId: LEADS, workflowName: 'Leads into the CRM, failures parked', open: 1 },
			],
			openByStep: [{ step: 'CRM Upsert', open: 1 }],
			openByOwner: [{ owner: 'sales-ops', open: 1 }],
			parkedPerDay: [{ day: new Date().toISOString().slice(0, 10), parked: 2 }],
		});
		expect((stats.topReasons as Array<{ count: number }>).reduce((n, r) => n + r.count, 0)).toBe(2);
		expect(stats.averageResolutionSeconds).toEqual(expect.any(Number));
	});

	it('Purge removes only closed records past retention and says how many', async () => {
		await adminQuery(
			`UPDATE "${ctx!.schema}".dead_letters SET expires_at = now() - interval '1 day'`,
		);
		const purged = nodeOutputs(await trigger(ctx!.n8n, 'dlqPurge', 'dlq-purge', {}), 'Purge')[0][0];
		expect(purged).toEqual({ purged: 1 });
		const left = await adminQuery<{ status: string }>(
			`SELECT status FROM "${ctx!.schema}".dead_letters`,
		);
		expect(left).toEqual([{ status: 'replay_requested' }]);
	});

	it('a late heartbeat is reported once, then its recovery', async () => {
		await trigger(ctx!.n8n, 'hbBeat', 'hb-beat', { name: 'nightly import', periodMinutes: 0.02 });
		await new Promise((r) => setTimeout(r, 2_000));
		const late = nodeOutputs(await trigger(ctx!.n8n, 'hbCheck', 'hb-check', {}), 'Check')[0];
		expect(late.map((c) => [c.name, c.event])).toEqual([['nightly import', 'late']]);
		expect(nodeOutputs(await trigger(ctx!.n8n, 'hbCheck', 'hb-check', {}), 'Check')[0]).toEqual([]);
		await trigger(ctx!.n8n, 'hbBeat', 'hb-beat', { name: 'nightly import', periodMinutes: 60 });
		const recovered = nodeOutputs(await trigger(ctx!.n8n, 'hbCheck', 'hb-check', {}), 'Check')[0];
		expect(recovered.map((c) => [c.name, c.event])).toEqual([['nightly import', 'recovered']]);
	});
});
