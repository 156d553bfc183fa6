import { DemoApi } from '../../demo/api';
import { bundledToActivate, bundledWorkflows } from '../../dev/bundled';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { codeNode, connect, packageNode, webhookNode, workflow } from '../../dev/workflows';
import { CONSOLE_OPERATOR, consoleCredentials } from '../helpers/chromium';
import { adminQuery } from '../helpers/store';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Alerts that wake someone only when they must, in real n8n through the bundled workflows: one
 * mapping error parks 300 leads and the receiver gets one page, updates of the count at
 * most once per interval, and after the fix and a batch replay from the console one
 * resolve, in that order, all under one dedup key; an internal failure outside its owner's hours
 * pages nobody and is in the next digest.
 */
jest.setTimeout(900_000);

const LEADS = 300;
const EXPORT = 'alertsNightlyExport';

/** A PagerDuty Events v2 event as the Alert workflow's *Page (HTTP)* sends it. */
interface PageEvent {
	event_action: 'trigger' | 'resolve';
	dedup_key: string;
	payload: { summary: string; severity: string; custom_details: { text: string } };
}

/** Working hours that do not hold the present hour (UTC), so the owner is off now. */
function offHoursNow(): string {
	const hour = (new Date().getUTCHours() + 2) % 24;
	const pad = (h: number) => String(h).padStart(2, '0');
	return `Mon-Sun ${pad(hour)}:00-${pad((hour + 1) % 24)}:00`;
}

/** A nightly export whose failure is parked for the data team (internal impact). */
const exportFlow = workflow(
	EXPORT,
	'Nightly export',
	[
		webhookNode('nightly-export-failed'),
		codeNode(
			'Failure',
			'return $input.all().map(({ json }) => ({ json: { error: { message: json.body.reason }, batch: json.body.batch } }));',
		),
		packageNode(
			'deadLetterPark',
			'Park',
			{
				operation: 'park',
				step: 'Load Warehouse',
				errorClass: 'permanent',
				idempotencyKey: '={{ $json.batch }}:load',
				parkOptions: { owner: 'data', integration: 'warehouse', impact: 'export not loaded' },
			},
			[520, 0],
		),
		{
			id: 'node-ExportAlert',
			name: 'Alert',
			type: 'n8n-nodes-base.executeWorkflow',
			typeVersion: 1,
			position: [780, 0],
			parameters: { source: 'database', workflowId: 'relAlertWorkflow', options: {} },
		},
	],
	connect(['Webhook', 'Failure'], ['Failure', 'Park'], ['Park', 'Alert']),
);

const demo = new DemoApi();
beforeAll(() => demo.start());
afterAll(() => demo.stop());

describe.each(n8nVersionsUnderTest())('alerts by cause, impact and hours in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	const consoleUrl = (query = '') => `${ctx!.n8n.baseUrl}/webhook/reliability-console${query}`;
	const auth = `Basic ${Buffer.from(`${CONSOLE_OPERATOR.username}:${CONSOLE_OPERATOR.password}`).toString('base64')}`;
	const pages = () =>
		(demo.alerts as Array<Partial<PageEvent>>)
			.map((a, i) => ({ ...a, at: demo.alertTimes[i] }))
			.filter((a): a is PageEvent & { at: number } => a.event_action !== undefined);

	beforeAll(async () => {
		demo.reset();
		const workflows = bundledWorkflows(demo.url).map((w) => {
			if (w.id !== 'relAlertWorkflow') return w;
			// What an operator sets on the Alert workflow: the CRM is customer-facing, the warehouse
			// internal; the data team is off now; updates at most once a minute.
			const notify = (w.nodes as Array<{ name: string; parameters: Record<string, unknown> }>).find(
				(n) => n.name === 'Notify',
			)!;
			Object.assign(notify.parameters, {
				impactClasses: {
					rule: [
						{ match: 'crm', impact: 'customer' },
						{ match: 'warehouse', impact: 'internal' },
					],
				},
				owners: { owner: [{ name: 'data', workingHours: offHoursNow(), timeZone: 'UTC' }] },
				updateIntervalMinutes: 1,
			});
			return w;
		});
		ctx = await startWithPackage(
			version,
			'alerts',
			[...workflows, exportFlow],
			consoleCredentials(),
			[...bundledToActivate(Number(version.split('.')[0])), 'relOperatorConsole', EXPORT],
		);
	});

	afterAll(async () => {
		await stopAndClean(ctx);
	});

	it('one mapping error parks 300 leads: one page, at most one update per interval, and after a batch replay one resolve', async () => {
		demo.faults = { ...demo.faults, rejectLocalPhones: true };
		const leads = Array.from({ length: LEADS }, (_, i) => ({
			submissionId: `alert-${version}-${i}`,
			email: `lead${i}@acme.io`,
			name: `Lead ${i}`,
			// The form sends local numbers: the CRM refuses every one for the same reason.
			phone: `0151 ${2000 + i}`,
		}));
		for (let at = 0; at < leads.length; at += 10)
			await Promise.all(
				leads.slice(at, at + 10).map(async (lead) => {
					expect((await ctx!.n8n.api.webhook('lead-form', lead)).status).toBe(200);
				}),
			);
		const letters = () =>
			adminQuery<{ id: string; status: string; issue_id: string | null }>(
				`SELECT id, status, issue_id FROM "${ctx!.schema}".dead_letters WHERE idempotency_key LIKE $1`,
				[`alert-${version}-%:crm-upsert`],
			);
		// Every lead parked and in its issue (the Alert workflow ran for each).
		await waitFor(
			'every lead parked and grouped',
			async () => {
				const now = await letters();
				return now.length === LEADS && now.every((l) => l.issue_id) ? now : undefined;
			},
			420_000,
			1_000,
		);
		const issueIds = new Set((await letters()).map((l) => String(l.issue_id)));
		expect(issueIds.size).toBe(1);
		const [issue] = [...issueIds];
		const ours = () => pages().filter((p) => p.dedup_key === `n8n-reliability:issue:${issue}`);
		// One page for the cause, not one per lead (the rest are counted updates, checked below).
		expect(ours()[0].event_action).toBe('trigger');
		expect(ours()[0].payload).toMatchObject({ severity: 'critical' });
		expect(ours().filter((p) => !/items of the same cause/.test(p.payload.summary))).toHaveLength(
			1,
		);
		expect(ours()[0].payload.summary).toMatch(
			/^Reliability: Worked example, lead routing: lead not in CRM \(alert-.*:crm-upsert\)$/,
		);

		// The interval passes: Recover's sweep (every minute, or called) sends the count, at most
		// once a minute; updates may also have gone out while the leads were still parking.
		await waitFor(
			'the update of the issue with every lead',
			async () => {
				await ctx!.n8n.api.webhook('reliability-recover', {});
				const last = ours().at(-1)!;
				return ours().length >= 2 &&
					last.payload.summary.includes(`: ${LEADS} items of the same cause (${LEADS} open) since`)
					? true
					: undefined;
			},
			150_000,
			10_000,
		);
		const updates = ours().slice(1);
		for (const update of updates) {
			expect(update).toMatchObject({ event_action: 'trigger' });
			expect(update.payload.summary).toMatch(/: \d+ items of the same cause \(\d+ open\) since/);
		}
		// At most one update per interval (one minute here), and one at the end with every lead.
		updates.forEach((update, i) =>
			expect(update.at - (i === 0 ? ours()[0].at : updates[i - 1].at)).toBeGreaterThanOrEqual(
				55_000,
			),
		);
		expect(updates.length).toBeLessThanOrEqual(4);

		// The console shows the issue with its items.
		const issues = await fetch(consoleUrl('?view=issues'), { headers: { authorization: auth } });
		const issuesPage = await issues.text();
		expect(issuesPage).toContain(`data-id="${issue}"`);
		expect(issuesPage).toMatch(new RegExp(`<td class="num items">${LEADS}</td>`));

		// The fix: the CRM now takes local numbers. The operator replays the issue's items as a batch.
		demo.faults = { ...demo.faults, rejectLocalPhones: false };
		const list = await (
			await fetch(consoleUrl(`?issue=${issue}`), { headers: { authorization: auth } })
		).text();
		const token = /name="token" value="([^"]+)"/.exec(list)![1];
		const replay = await fetch(consoleUrl(`?issue=${issue}`), {
			method: 'POST',
			redirect: 'manual',
			headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
			body: new URLSearchParams({
				action: 'batch_replay',
				issue,
				token,
				note: 'local numbers accepted',
			}),
		});
		expect(replay.status).toBe(303);
		// The Replay workflow takes 100 a run; its webhook runs it now rather than every 5 minutes.
		await waitFor(
			'every lead replayed',
			async () => {
				if ((await letters()).every((l) => l.status === 'replayed')) return true;
				await ctx!.n8n.api.webhook('reliability-replay', {});
				return undefined;
			},
			420_000,
			3_000,
		);
		expect(demo.contacts.filter((c) => c.email.startsWith('lead')).length).toBe(LEADS);

		// No item of the cause is open: the next sweep resolves the issue, once.
		await waitFor(
			'the resolve',
			async () => {
				await ctx!.n8n.api.webhook('reliability-recover', {});
				return ours().length >= 3 ? true : undefined;
			},
			150_000,
			5_000,
		);
		await ctx!.n8n.api.webhook('reliability-recover', {});
		await new Promise((resolve) => setTimeout(resolve, 3_000));
		expect(ours().map((p) => p.event_action)).toEqual([
			'trigger',
			...updates.map(() => 'trigger'),
			'resolve',
		]);
		expect(ours().at(-1)!.payload.summary).toMatch(/^Resolved: /);
	});

	it("an internal failure outside its owner's hours pages nobody and is in the next digest", async () => {
		const before = demo.alerts.length;
		expect(
			(
				await ctx!.n8n.api.webhook('nightly-export-failed', {
					batch: `export-${version}`,
					reason: 'warehouse refused the load',
				})
			).status,
		).toBe(200);
		const [letter] = await waitFor(
			'the export parked and grouped',
			async () => {
				const rows = await adminQuery<{ issue_id: string | null }>(
					`SELECT issue_id FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`,
					[`export-${version}:load`],
				);
				return rows[0]?.issue_id ? rows : undefined;
			},
			120_000,
			1_000,
		).catch(async (error: unknown) => {
			const [last] = await ctx!.n8n.api.executions(EXPORT);
			const result = last ? (await ctx!.n8n.api.execution(last.id)).data.resultData : undefined;
			throw new Error(
				`${String(error)}; the export's last run: ${JSON.stringify({ status: last?.status, node: result?.lastNodeExecuted, error: result?.error?.message })}`,
			);
		});
		const [issue] = await adminQuery<{ route: string }>(
			`SELECT route FROM "${ctx!.schema}".alert_issues WHERE id = $1`,
			[letter.issue_id],
		);
		expect(issue.route).toBe('digest');
		await new Promise((resolve) => setTimeout(resolve, 2_000));
		// Nothing raised now (an earlier test's issue may be resolved meanwhile: that notice is not this).
		expect(
			demo.alerts.slice(before).filter((a) => (a as { action?: string }).action !== 'resolve'),
		).toEqual([]);

		expect((await ctx!.n8n.api.webhook('reliability-digest', {})).status).toBe(200);
		const digest = await waitFor(
			'the digest',
			async () =>
				(demo.alerts.slice(before) as Array<{ kind?: string; text?: string }>).find(
					(a) => a.kind === 'digest',
				),
			60_000,
		);
		expect(digest.text).toContain(
			`Nightly export: export not loaded: 1 item (1 open), held for this digest (outside its owner's hours)`,
		);
	});
});
