import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUDIT_RULES, asWorkflow, type AuditWorkflow, auditWorkflow } from '../../lib/audit';

/**
 * The audit on real workflows: ordinary unsafe ones written the way people write them (each
 * seeded defect must be found, and nothing else), and the package's own bundled workflows (the
 * worked example passes every line; every finding on the others is true, and what they accept
 * by design is accepted in a note with its reason).
 */
const read = (path: string): AuditWorkflow => asWorkflow(JSON.parse(readFileSync(path, 'utf8')), 0);
const unsafe = (name: string) => read(join(__dirname, 'fixtures/unsafe-workflows', name));
const bundled = (name: string) => read(join(__dirname, '../../workflows', name));
const found = (workflow: AuditWorkflow) =>
	auditWorkflow(workflow)
		.findings.map((f) => `${f.rule} @ ${f.node ?? '(workflow)'}`)
		.sort();

describe('the audit finds every seeded defect in ordinary unsafe workflows, and nothing else', () => {
	it.each([
		[
			'stripe-to-hubspot.json',
			[
				'inbound-write-without-dedupe @ Create Deal',
				'inbound-write-without-dedupe @ Tell Sales',
				'input-not-validated @ Create Deal',
				'input-not-validated @ Tell Sales',
				'no-error-workflow @ (workflow)',
				'unkeyable-write-retried @ Create Deal',
				'write-not-parked @ Create Deal',
				'write-without-key @ Tell Sales',
			],
		],
		[
			'order-sync-http-retry.json',
			[
				'http-write-retry-without-key @ Create ERP Order',
				'inbound-write-without-dedupe @ Create ERP Order',
				'input-not-validated @ Create ERP Order',
			],
		],
		[
			'nightly-invoices.json',
			[
				'failed-items-go-nowhere @ Create Invoice',
				'key-from-attempt @ Create Invoice',
				'no-error-workflow @ (workflow)',
				'schedule-without-heartbeat @ Every Night',
				'write-not-parked @ Create Invoice',
			],
		],
		[
			'double-retry-write.json',
			[
				'failed-items-go-nowhere @ Claim Event',
				'input-not-validated @ Charge',
				'integration-without-owner @ Charge',
				'key-from-attempt @ Charge',
				'retention-shorter-than-replay @ Charge',
				'retry-at-two-layers @ Charge',
			],
		],
		[
			'continue-on-fail-mailer.json',
			[
				'failed-items-go-nowhere @ Welcome Mail',
				'inbound-write-without-dedupe @ Log Signup',
				'inbound-write-without-dedupe @ Welcome Mail',
				'input-not-validated @ Log Signup',
				'input-not-validated @ Welcome Mail',
			],
		],
		['route-only-write.json', ['failed-items-go-nowhere @ Push Stock']],
	])('%s', (file, expected) => {
		expect(found(unsafe(file))).toEqual(expected);
	});

	it('every fixture is covered above', () => {
		expect(readdirSync(join(__dirname, 'fixtures/unsafe-workflows')).sort()).toEqual([
			'continue-on-fail-mailer.json',
			'double-retry-write.json',
			'nightly-invoices.json',
			'order-sync-http-retry.json',
			'route-only-write.json',
			'stripe-to-hubspot.json',
		]);
	});

	it('says why and what to do, with the workflow and node of each finding', () => {
		const [finding] = auditWorkflow(unsafe('order-sync-http-retry.json')).findings.filter(
			(f) => f.rule === 'http-write-retry-without-key',
		);
		expect(finding).toEqual({
			rule: 'http-write-retry-without-key',
			severity: 'high',
			workflowId: 'uW2',
			workflowName: 'Shop order to ERP',
			node: 'Create ERP Order',
			why: expect.stringMatching(
				/^n8n's Retry On Fail resends this write .* \(POST with Retry On Fail\)$/,
			),
			fix: expect.stringContaining('Idempotent HTTP Write'),
		});
	});

	it('fails the checklist line each finding is about, naming the node, and scores the rest', () => {
		const audit = auditWorkflow(unsafe('nightly-invoices.json'));
		expect(audit.checklist.map((l) => [l.id, l.result, l.node])).toEqual([
			['dedupe', 'not_applicable', null],
			['keyed', 'failed', 'Create Invoice'],
			['unkeyable', 'passed', null],
			['retries', 'passed', null],
			['parked', 'failed', 'Create Invoice'],
			['alerts', 'failed', 'Nightly invoices'],
			['heartbeat', 'failed', 'Every Night'],
			['validated', 'not_applicable', null],
		]);
		expect(audit.score).toBe(33);
	});
});

describe('the failure inventory', () => {
	it('lists every step in execution order: what it is, how it can fail, what is done about it', () => {
		const audit = auditWorkflow(unsafe('order-sync-http-retry.json'));
		expect(audit.inventory).toEqual([
			{
				step: 'New Order',
				nodeType: 'n8n-nodes-base.webhook',
				kind: 'trigger',
				failures: [
					{ way: 'duplicate_delivery', class: 'business' },
					{ way: 'invalid_data', class: 'permanent' },
				],
				handling: 'a repeated delivery runs again',
			},
			{
				step: 'Create ERP Order',
				nodeType: 'n8n-nodes-base.httpRequest',
				kind: 'write',
				failures: [
					{ way: 'timeout', class: 'transient' },
					{ way: 'rate_limit', class: 'transient' },
					{ way: 'invalid_data', class: 'permanent' },
					{ way: 'refused_permission', class: 'permanent' },
					{ way: 'unknown_outcome', class: 'unknown' },
				],
				handling:
					'n8n tries it up to 5 times on any failure, 5000 ms apart; an error stops the execution and error workflow errWf1 runs',
			},
			{
				step: 'Respond',
				nodeType: 'n8n-nodes-base.respondToWebhook',
				kind: 'transform',
				failures: [],
				handling: 'an error stops the execution and error workflow errWf1 runs',
			},
		]);
	});

	it('orders the worked example from its trigger through its writes', () => {
		const steps = auditWorkflow(bundled('worked-example-lead-routing.json')).inventory;
		expect(steps.filter((s) => s.kind === 'write').map((s) => s.step)).toEqual([
			'Enrich',
			'Upsert Contact',
			'Assign Owner',
		]);
		expect(steps[0]).toMatchObject({ step: 'Lead Form', kind: 'trigger' });
		expect(steps.find((s) => s.step === 'Enrich')!.handling).toMatch(
			/^retries transient failures up to 5 attempts with the same key; an unknown outcome is .*; parks failed items and routes them to Failed/,
		);
	});
});

describe('the bundled workflows', () => {
	it('every bundled workflow is audited here', () => {
		expect(readdirSync(join(__dirname, '../../workflows')).length).toBe(13);
	});

	it('the worked example passes every line of the checklist that applies, with no finding', () => {
		const audit = auditWorkflow(bundled('worked-example-lead-routing.json'));
		expect(audit.findings).toEqual([]);
		expect(audit.accepted).toEqual([]);
		expect(audit.score).toBe(100);
		expect(audit.checklist.filter((l) => l.result !== 'passed').map((l) => l.id)).toEqual([
			'unkeyable',
			'heartbeat',
		]);
	});

	it('an unsafe copy of the worked example (HTTP Request with Retry On Fail for the upsert) fails retries there', () => {
		const workflow = bundled('worked-example-lead-routing.json');
		const upsert = workflow.nodes.find((n) => n.name === 'Upsert Contact')!;
		Object.assign(upsert, {
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.2,
			parameters: { method: 'POST', url: 'http://127.0.0.1:5680/crm/contacts', sendBody: true },
			retryOnFail: true,
			maxTries: 3,
		});
		const audit = auditWorkflow(workflow);
		expect(audit.findings.map((f) => `${f.rule} @ ${f.node}`)).toEqual([
			'http-write-retry-without-key @ Upsert Contact',
		]);
		expect(audit.checklist.filter((l) => l.result === 'failed').map((l) => [l.id, l.node])).toEqual(
			[['retries', 'Upsert Contact']],
		);
	});

	// Every finding on the operations workflows is true: they run on a schedule with no heartbeat
	// and no error workflow, and the Error handler parks failed executions without an owner.
	it.each([
		['error-handler.json', ['park-without-owner @ Park Failure']],
		['metrics.json', []],
		// Run by a person from the editor: no trigger that could fire unseen.
		['fire-drill.json', []],
		['operator-console.json', []],
		// Page (HTTP) sends PagerDuty's dedup_key: keyed.
		['alert.json', []],
		[
			'daily-digest.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every Morning'],
		],
		[
			'heartbeat-watch.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every 5 Minutes'],
		],
		[
			'housekeeping.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every Night'],
		],
		[
			'outbox-relay.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every 5 Seconds'],
		],
		[
			'recover.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every Minute'],
		],
		[
			'replay.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every 5 Minutes'],
		],
		[
			'weekly-audit.json',
			['no-error-workflow @ (workflow)', 'schedule-without-heartbeat @ Every Monday'],
		],
	])('%s: only true findings', (file, expected) => {
		expect(found(bundled(file))).toEqual(expected);
	});

	it('what a bundled workflow does by design is accepted in a note, with the reason', () => {
		const accepted = [
			...auditWorkflow(bundled('alert.json')).accepted,
			...auditWorkflow(bundled('daily-digest.json')).accepted,
		].map((a) => [a.workflowName, a.rule, a.node, a.reason.slice(0, 30)]);
		expect(accepted).toEqual([
			['Reliability: Alert', 'write-without-key', 'Send (HTTP)', 'a notice to a chat or webhook,'],
			[
				'Reliability: Daily digest',
				'inbound-write-without-dedupe',
				'Send (HTTP)',
				'a digest is a snapshot of what',
			],
			[
				'Reliability: Daily digest',
				'write-without-key',
				'Send (HTTP)',
				'a digest is a snapshot of what',
			],
			[
				'Reliability: Daily digest',
				'write-not-parked',
				'Send (HTTP)',
				'a digest is a snapshot of what',
			],
		]);
	});
});

describe('rules', () => {
	const write = (customKey: string) =>
		asWorkflow(
			{
				name: 'w',
				nodes: [
					{ name: 'Every Hour', type: 'n8n-nodes-base.scheduleTrigger', parameters: {} },
					{
						name: 'Write',
						type: 'n8n-nodes-reliability.idempotentHttpWrite',
						parameters: { keyMode: 'custom', customKey, idempotency: { retentionDays: 90 } },
					},
				],
				connections: { 'Every Hour': { main: [[{ node: 'Write', type: 'main', index: 0 }]] } },
			},
			0,
		);
	it.each([
		['={{ $execution.id }}', '$execution.id'],
		['={{ $json.id }}-{{ $now.toISO() }}', '$now'],
		['={{ $json.id }}:{{ $runIndex }}', '$runIndex'],
		['={{ Math.random() }}', 'Math.random()'],
		['={{ $json.id }}-{{ crypto.randomUUID() }}', 'a random or UUID function'],
		['={{ Date.now() }}', 'the current time'],
	])('a key built from the attempt (%s) is found, naming the part', (key, part) => {
		const finding = auditWorkflow(write(key)).findings.find((f) => f.rule === 'key-from-attempt');
		expect(finding?.why).toContain(`(the key uses ${part})`);
	});

	it('a key built from the business operation is not', () => {
		expect(
			auditWorkflow(write('=invoice:{{ $json.orderId }}:create:v{{ $json.version }}')).findings.map(
				(f) => f.rule,
			),
		).not.toContain('key-from-attempt');
	});

	it('a sticky note accepts a finding about the whole workflow, with its reason', () => {
		const workflow = unsafe('nightly-invoices.json');
		workflow.nodes.push({
			name: 'Note',
			type: 'n8n-nodes-base.stickyNote',
			parameters: {
				content:
					'## Runbook\naudit accepts no-error-workflow: failures page through the ERP itself',
			},
		});
		const audit = auditWorkflow(workflow);
		expect(audit.findings.map((f) => f.rule)).not.toContain('no-error-workflow');
		expect(audit.accepted).toEqual([
			expect.objectContaining({
				rule: 'no-error-workflow',
				node: null,
				reason: 'failures page through the ERP itself',
			}),
		]);
		expect(audit.checklist.find((l) => l.id === 'alerts')!.result).toBe('passed');
	});
});

describe('acceptances', () => {
	it('an acceptance of a rule that does not exist is a finding at its node, and accepts nothing', () => {
		const workflow = bundled('worked-example-lead-routing.json');
		const enrich = workflow.nodes.find((n) => n.name === 'Enrich')!;
		enrich.notes = 'audit accepts retry-at-two-layer: the target dedupes';
		const audit = auditWorkflow(workflow);
		expect(
			audit.findings.map((f) => [
				f.rule,
				f.node,
				f.why.endsWith('("audit accepts retry-at-two-layer")'),
			]),
		).toEqual([['acceptance-of-unknown-rule', 'Enrich', true]]);
		expect(audit.accepted).toEqual([]);
	});
});

describe('the rules', () => {
	it('are each documented in the Reliability Control reference, with their severity', () => {
		const reference = readFileSync(
			join(__dirname, '../../docs/nodes/reliability-control.md'),
			'utf8',
		);
		for (const [rule, { severity }] of Object.entries(AUDIT_RULES))
			expect(reference).toContain(`| \`${rule}\` | ${severity} |`);
	});
});

describe('ordinary workflows the rules must read right', () => {
	const flow = (...nodes: Array<Record<string, unknown>>) => {
		const connections: Record<string, unknown> = {};
		for (let i = 0; i + 1 < nodes.length; i++)
			connections[String(nodes[i].name)] = {
				main: [[{ node: String(nodes[i + 1].name), type: 'main', index: 0 }]],
			};
		return asWorkflow({ name: 'flow', nodes, connections, settings: { errorWorkflow: 'e1' } }, 0);
	};
	const webhook = { name: 'Hook', type: 'n8n-nodes-base.webhook', parameters: {} };
	const rules = (workflow: AuditWorkflow) =>
		auditWorkflow(workflow).findings.map((f) => `${f.rule} @ ${f.node ?? '(workflow)'}`);

	it("n8n's Remove Duplicates across executions deduplicates", () => {
		expect(
			rules(
				flow(
					webhook,
					{
						name: 'Seen Before?',
						type: 'n8n-nodes-base.removeDuplicates',
						parameters: { operation: 'removeItemsSeenInPreviousExecutions' },
					},
					{ name: 'If', type: 'n8n-nodes-base.if', parameters: {} },
					{ name: 'Post', type: 'n8n-nodes-base.slack', parameters: {} },
				),
			),
		).toEqual([]);
	});

	it('a disabled Event Dedupe guards nothing: n8n passes the items through it', () => {
		expect(
			rules(
				flow(
					webhook,
					{
						name: 'Claim',
						type: 'n8n-nodes-reliability.eventDedupe',
						parameters: { validate: true },
						disabled: true,
					},
					{ name: 'Post', type: 'n8n-nodes-base.slack', parameters: {} },
				),
			),
		).toEqual(['inbound-write-without-dedupe @ Post', 'input-not-validated @ Post']);
	});

	it('an AI agent and its model are no writes; a read by default (Google Sheets) is no write', () => {
		const chat = { name: 'Chat', type: '@n8n/n8n-nodes-langchain.chatTrigger', parameters: {} };
		const agent = {
			name: 'Agent',
			type: '@n8n/n8n-nodes-langchain.agent',
			parameters: {},
			retryOnFail: true,
		};
		expect(rules(flow(chat, agent))).toEqual([]);
		const sheet = {
			name: 'Rows',
			type: 'n8n-nodes-base.googleSheets',
			parameters: {},
			retryOnFail: true,
		};
		expect(rules(flow(webhook, sheet))).toEqual([]);
	});

	it('a SELECT is a read; a PUT or an update retried repeats nothing', () => {
		const select = {
			name: 'Query',
			type: 'n8n-nodes-base.postgres',
			parameters: { operation: 'executeQuery', query: 'SELECT * FROM orders WHERE id = 1' },
			retryOnFail: true,
		};
		expect(auditWorkflow(flow(webhook, select)).inventory[1].kind).toBe('read');
		const put = {
			name: 'Put',
			type: 'n8n-nodes-base.httpRequest',
			parameters: { method: 'PUT', url: 'https://x.example.com/items/1' },
			retryOnFail: true,
		};
		const update = {
			name: 'Update',
			type: 'n8n-nodes-base.hubspot',
			parameters: { resource: 'deal', operation: 'update' },
			retryOnFail: true,
		};
		const found = rules(flow(webhook, { name: 'If', type: 'n8n-nodes-base.if' }, put, update));
		expect(found.filter((r) => /retr|key/.test(r))).toEqual([]);
	});

	it('a workflow started only by hand needs no error workflow; an IMAP trigger is inbound', () => {
		const manual = asWorkflow(
			{
				name: 'By hand',
				nodes: [
					{ name: 'Start', type: 'n8n-nodes-base.manualTrigger' },
					{ name: 'Post', type: 'n8n-nodes-base.slack' },
				],
				connections: { Start: { main: [[{ node: 'Post', type: 'main', index: 0 }]] } },
			},
			0,
		);
		expect(rules(manual)).toEqual([]);
		const imap = { name: 'Mail', type: 'n8n-nodes-base.emailReadImap', parameters: {} };
		expect(rules(flow(imap, { name: 'Issue', type: 'n8n-nodes-base.jira' }))).toContain(
			'inbound-write-without-dedupe @ Issue',
		);
	});

	it('a Loop Over Items error output comes after its done and loop outputs', () => {
		const loop = {
			name: 'Loop',
			type: 'n8n-nodes-base.splitInBatches',
			typeVersion: 3,
			parameters: {},
			onError: 'continueErrorOutput',
		};
		expect(
			rules(flow({ name: 'Every Hour', type: 'n8n-nodes-base.scheduleTrigger' }, loop)),
		).toContain('failed-items-go-nowhere @ Loop');
	});

	it('a sticky note in markdown accepts a rule found on a node', () => {
		const workflow = unsafe('nightly-invoices.json');
		workflow.nodes.push({
			name: 'Note',
			type: 'n8n-nodes-base.stickyNote',
			parameters: { content: '- **audit accepts schedule-without-heartbeat: watched by the ERP**' },
		});
		expect(auditWorkflow(workflow).accepted).toEqual([
			expect.objectContaining({
				rule: 'schedule-without-heartbeat',
				node: 'Every Night',
				reason: 'watched by the ERP',
			}),
		]);
	});
});

describe('input', () => {
	it('an item that is not a workflow is refused with its index and what to pass', () => {
		expect(() => asWorkflow({ id: 'x', name: 'No nodes' }, 3)).toThrow(
			expect.objectContaining({
				itemIndex: 3,
				message: 'Item 3 is not a workflow: it has no "nodes" list',
			}),
		);
		expect(() => asWorkflow({ name: 'Bad', nodes: [{ name: 'A' }] }, 1)).toThrow(
			'Item 1: node 0 of workflow "Bad" has no name or type',
		);
	});

	it('connections of an odd shape are read as far as they go, never failing the audit', () => {
		const audit = auditWorkflow(
			asWorkflow(
				{
					name: 'Odd',
					nodes: [
						{ name: 'Hook', type: 'n8n-nodes-base.webhook' },
						{ name: 'Post', type: 'n8n-nodes-base.httpRequest', parameters: { method: 7 } },
					],
					connections: { Hook: { main: { 0: 'Post' } }, Post: { main: [null, [null]] } },
				},
				0,
			),
		);
		expect(audit.inventory.map((s) => s.step)).toEqual(['Hook', 'Post']);
	});

	it('a workflow with no connections is audited node by node', () => {
		const audit = auditWorkflow(
			asWorkflow({ name: 'Lone', nodes: [{ name: 'Code', type: 'n8n-nodes-base.code' }] }, 0),
		);
		expect(audit.inventory.map((s) => [s.step, s.kind])).toEqual([['Code', 'transform']]);
		expect(audit.score).toBe(100);
	});
});
