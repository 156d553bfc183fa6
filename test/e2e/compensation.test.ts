import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { nodeOutputs } from '../../dev/harness/rest';
import { TestTarget } from '../../dev/target/server';
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

const target = new TestTarget();
beforeAll(() => target.start());
afterAll(() => target.stop());

const retries = {
	baseDelaySeconds: 0.05,
	maxDelaySeconds: 0.1,
	deadlineSeconds: 20,
	maxAttempts: 2,
};

/**
 * Signup in three writes: a contact (reversed by DELETE with the contact's id from its saved
 * response), an account (reversed by a POST with a body), and a welcome mail that the target
 * refuses, so the item is parked after two steps took effect.
 */
function signupFlow(version: string) {
	const url = (route: string) => target.url(`/${version}${route}`);
	const lead = "$('Webhook').item.json.body.leadId";
	const write = (name: string, route: string, extra: Record<string, unknown>, x: number) =>
		packageNode(
			'idempotentHttpWrite',
			name,
			{
				method: 'POST',
				url: url(route),
				keyMode: 'custom',
				customKey: `={{ ${lead} }}:${route}`,
				jsonBody: `={{ JSON.stringify({ lead: ${lead} }) }}`,
				retries,
				onFailure: 'parkAndRoute',
				...extra,
			},
			[x, 0],
		);
	return workflow(
		'signupFlow',
		'Signup in three steps',
		[
			webhookNode('signup'),
			write(
				'Create Contact',
				'/contacts',
				{
					compensation: 'request',
					compensationMethod: 'DELETE',
					compensationUrl: `=${url('/contacts-undo')}?id={{ $json.id }}`,
				},
				260,
			),
			write(
				'Open Account',
				'/accounts',
				{
					compensation: 'request',
					compensationMethod: 'POST',
					compensationUrl: url('/accounts-undo'),
					compensationBody: '{"account": "{{ $json.id }}", "reason": "signup failed"}',
				},
				520,
			),
			write(
				'Send Welcome',
				'/welcome',
				{ compensation: 'manual', compensationPlan: '=Tell {{ $json.lead }} the signup failed' },
				780,
			),
		],
		connect(
			['Webhook', 'Create Contact'],
			['Create Contact', 'Open Account'],
			['Open Account', 'Send Welcome'],
		),
	);
}

const compensateFlow = webhookInto(
	'dlqCompensate',
	'dlq-compensate',
	packageNode('deadLetterPark', 'Compensate', {
		operation: 'compensate',
		targetId: '={{ $json.body.id }}',
		actor: '={{ $json.body.actor }}',
		reason: 'signup abandoned',
	}),
);

describe.each(n8nVersionsUnderTest())('Compensation in n8n %s', (version) => {
	let ctx: E2eContext | undefined;

	beforeAll(async () => {
		for (const route of ['/contacts', '/accounts', '/welcome', '/contacts-undo', '/accounts-undo'])
			target.route(`/${version}${route}`);
		ctx = await startWithPackage(version, 'compensate', [signupFlow(version), compensateFlow]);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('a signup failing at step 3 is compensated once, newest step first, with evidence', async () => {
		target.script(`/${version}/welcome`, { status: 422, body: { message: 'no template' } });
		const run = await trigger(ctx!.n8n, 'signupFlow', 'signup', { leadId: 'lead-7' });
		const [failed] = nodeOutputs(run, 'Send Welcome')[1];
		const id = String(failed.deadLetterId);
		expect(failed).toMatchObject({ class: 'permanent', status: 422 });

		const [parked] = await adminQuery<Record<string, unknown>>(
			`SELECT steps, source_version, attempt_history FROM "${ctx!.schema}".dead_letters WHERE id = $1`,
			[id],
		);
		expect((parked.steps as Array<{ step: string }>).map((s) => s.step)).toEqual([
			'Create Contact',
			'Open Account',
		]);
		// n8n does not tell a node its version ID: the fingerprint of the connected nodes stands in.
		expect(parked.source_version).toMatch(/^fingerprint:[0-9a-f]{64}$/);
		expect(parked.attempt_history).toEqual([
			expect.objectContaining({ attempt: 1, status: 422, class: 'permanent' }),
		]);

		const press = async () =>
			nodeOutputs(
				await trigger(ctx!.n8n, 'dlqCompensate', 'dlq-compensate', { id, actor: 'ops' }),
				'Compensate',
			)[0][0];
		const first = await press();
		const second = await press();
		expect(first).toMatchObject({ result: 'compensated' });
		expect((first.sent as Array<{ step: string }>).map((s) => s.step)).toEqual([
			'Open Account',
			'Create Contact',
		]);
		expect(second).toMatchObject({ result: 'already' });

		const contactUndo = target.requestsTo(`/${version}/contacts-undo`);
		const accountUndo = target.requestsTo(`/${version}/accounts-undo`);
		expect(contactUndo).toHaveLength(1);
		expect(accountUndo).toHaveLength(1);
		const [contact] = target.effectsOf(`/${version}/contacts`);
		const [account] = target.effectsOf(`/${version}/accounts`);
		expect(contactUndo[0]).toMatchObject({ method: 'DELETE', key: 'lead-7:/contacts:compensate' });
		expect(accountUndo[0].body).toEqual({ account: String(account.id), reason: 'signup failed' });
		expect(accountUndo[0].at).toBeLessThanOrEqual(contactUndo[0].at);
		expect(contact.id).toEqual(expect.any(Number));

		const events = await adminQuery<{ to_status: string; reason: string }>(
			`SELECT to_status, reason FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
			[id],
		);
		expect(events.filter((e) => e.reason?.startsWith('compensation of '))).toHaveLength(2);
		expect(events.at(-1)).toMatchObject({ to_status: 'compensated' });
		expect(events.at(-1)!.reason).toContain('signup abandoned; 2 steps reversed');
	});
});
