import { DemoApi } from '../../demo/api';
import { nodeOutputs } from '../../dev/harness/rest';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { parkedOrThrow, parkItems, updateDeadLetterStatus } from '../../lib/deadletter';
import { Store } from '../../lib/store';
import { adminQuery, storeConfig } from '../helpers/store';
import { bundledToActivate, bundledWorkflows } from '../../dev/bundled';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

jest.setTimeout(600_000);

const EXAMPLE = 'relLeadRouting01';
const ALERT = 'relAlertWorkflow';
const REPLAY = 'relReplayWorkflow';

const demo = new DemoApi();

/**
 * The alerts the sink received after the first `from`, without the "resolved" notices of earlier
 * issues: the alert workflow resolves an issue once none of its items is open, at any moment of
 * a later test, so a test counts the alerts it raised, not every message the sink holds.
 */
function raisedSince(from: number): unknown[] {
	return demo.alerts
		.slice(from)
		.filter((alert) => (alert as { action?: string }).action !== 'resolve');
}
beforeAll(() => demo.start());
afterAll(() => demo.stop());

describe.each(n8nVersionsUnderTest())(
	'the worked example, lead routing under failure, in n8n %s',
	(version) => {
		let ctx: E2eContext | undefined;

		beforeAll(async () => {
			demo.reset();
			const workflows = bundledWorkflows(demo.url);
			ctx = await startWithPackage(
				version,
				'example',
				workflows,
				[],
				bundledToActivate(Number(version.split('.')[0])),
			);
		});

		afterAll(async () => {
			await stopAndClean(ctx);
		});

		/**
		 * Runs the Replay workflow through its webhook, which answers once the batch is done. Replay
		 * keeps no successful execution in n8n (it runs every 5 minutes), so its answer is the record.
		 */
		const runReplay = async (): Promise<unknown> => {
			const answer = await ctx!.n8n.api.webhook('reliability-replay', {});
			expect(answer.status).toBe(200);
			return answer.body;
		};

		/** What the store and n8n say of a record that did not end replayed: for a failing run's log. */
		const whyNotReplayed = async (id: string, replayed: unknown): Promise<string> => {
			const letters = await adminQuery<Record<string, unknown>>(
				`SELECT id, status, step, error_class, error_message, execution_id FROM "${ctx!.schema}".dead_letters ORDER BY id`,
			);
			const events = await adminQuery<Record<string, unknown>>(
				`SELECT actor, from_status, to_status, reason FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
				[id],
			);
			const runs = await Promise.all(
				[
					...(await ctx!.n8n.api.executions(REPLAY)).slice(0, 1),
					...(await ctx!.n8n.api.executions(EXAMPLE)).slice(0, 2),
				].map(async ({ id: run }) => {
					const { status, data } = await ctx!.n8n.api.execution(run);
					const result = data.resultData;
					return { run, status, last: result.lastNodeExecuted, error: result.error?.message };
				}),
			);
			return JSON.stringify({ replayed, letters, events, runs });
		};

		it('every bundled workflow imports', async () => {
			const listed = await ctx!.n8n.api.rest<Array<{ id: string; name: string }>>(
				'GET',
				'/workflows',
			);
			const names = (
				Array.isArray(listed) ? listed : (listed as { data: Array<{ name: string }> }).data
			)
				.map((w) => w.name)
				.sort();
			expect(names).toEqual([
				'Reliability: Alert',
				'Reliability: Daily digest',
				'Reliability: Error handler',
				'Reliability: Fire drill',
				'Reliability: Heartbeat watch',
				'Reliability: Housekeeping',
				'Reliability: Metrics',
				'Reliability: Operator Console',
				'Reliability: Outbox relay',
				'Reliability: Recover',
				'Reliability: Replay',
				'Reliability: Weekly audit',
				'Reliability: Worked example, lead routing',
			]);
		});

		let failedRunId = '';

		it('duplicate webhook stopped, enrichment timeout retried, CRM rejection parked with everything, exactly one alert', async () => {
			demo.faults = {
				enrichTimeouts: 1,
				enrichDelayMs: 5_000,
				rejectLocalPhones: true,
				crmUnavailable: 0,
			};
			const lead = {
				submissionId: 'form-7f3a',
				email: 'ana@acme.io',
				name: 'Ana Lima',
				phone: '0151 2345678',
			};
			// The form tool does not hear back in time and sends the webhook again.
			const [first, second] = await Promise.all([
				ctx!.n8n.api.webhook('lead-form', lead),
				ctx!.n8n.api.webhook('lead-form', lead),
			]);
			expect([first.status, second.status]).toEqual([200, 200]);
			const runs = await ctx!.n8n.api.waitForExecutions(EXAMPLE, 2, 120_000);

			// One copy went through, the other stopped at the claim.
			const claims = runs.map((run) => nodeOutputs(run, 'Claim Submission'));
			expect(claims.map(([news]) => news.length).sort()).toEqual([0, 1]);
			expect(claims.map(([, duplicates]) => duplicates.length).sort()).toEqual([0, 1]);
			const through = runs.find((run) => nodeOutputs(run, 'Claim Submission')[0].length === 1)!;
			failedRunId = through.id;

			// Enrichment timed out once and succeeded on the retry, inside its deadline.
			expect(demo.enrichCalls).toBe(2);
			expect(nodeOutputs(through, 'Enrich')[0][0]).toMatchObject({
				response: { company: 'Acme' },
				_reliability: { attempts: 2, replayed: false },
			});

			// The CRM rejected the phone format: no retry, parked with payload, message, link and what happened.
			const [, crmFailed] = nodeOutputs(through, 'Upsert Contact');
			expect(crmFailed[0]).toMatchObject({ class: 'permanent', status: 422, attempts: 1 });
			const parked = await adminQuery<Record<string, unknown>>(
				`SELECT * FROM "${ctx!.schema}".dead_letters`,
			);
			expect(parked).toHaveLength(1);
			expect(parked[0]).toMatchObject({
				step: 'Upsert Contact',
				workflow_id: EXAMPLE,
				error_class: 'permanent',
				error_status: 422,
				already_happened: 'enriched, not in CRM',
				impact: 'lead not in CRM',
				owner: 'sales-ops',
				idempotency_key: 'form-7f3a:crm-upsert',
				run_link: `${ctx!.n8n.baseUrl}/workflow/${EXAMPLE}/executions/${through.id}`,
			});
			expect(String(parked[0].error_message)).toContain('phone: invalid format "0151 2345678"');
			expect((parked[0].payload as { lead: unknown }).lead).toEqual(lead);
			expect(demo.contacts).toEqual([]);

			// Exactly one alert naming the workflow, the item, the impact, the link and the next action.
			await ctx!.n8n.api.waitForExecutions(ALERT, 1);
			await waitFor(
				'the alert at the sink',
				async () => (demo.alerts.length > 0 ? true : undefined),
				30_000,
			);
			expect(demo.alerts).toHaveLength(1);
			const alert = demo.alerts[0] as { text: string; dedupKey: string; owner: string };
			const [firstLine] = alert.text.split('\n');
			expect(firstLine).toBe(
				'Reliability: Worked example, lead routing: lead not in CRM (form-7f3a:crm-upsert)',
			);
			expect(alert.text).toContain(
				`Run: ${ctx!.n8n.baseUrl}/workflow/${EXAMPLE}/executions/${through.id}`,
			);
			expect(alert.text).toContain('Already happened: enriched, not in CRM');
			expect(alert.text).toMatch(/Next action \(sales-ops\): Fix the cause/);
			// The lead's cause opened an issue: later leads refused the same way update its count.
			expect(alert.dedupKey).toMatch(/^n8n-reliability:issue:\d+$/);
			expect(alert.text).toMatch(/\nIssue: #\d+, where later items of the same cause are counted/);
		});

		it('the mapping is fixed and the item replayed: exactly one contact exists, enrichment not repeated', async () => {
			expect(failedRunId).not.toBe('');
			await ctx!.n8n.api.updateWorkflow(EXAMPLE, (workflow) => {
				const map = workflow.nodes.find((n) => n.name === 'Map to CRM')!;
				const assignments = (
					map.parameters as { assignments: { assignments: Array<{ name: string; value: string }> } }
				).assignments.assignments;
				// The owner's fix: local numbers get the country code.
				assignments.find((a) => a.name === 'phone')!.value =
					"={{ (p => p.startsWith('+') ? p : '+49' + p.replace(/^0/, '').replace(/\\s+/g, ''))($json.body.phone) }}";
			});
			const [record] = await adminQuery<{ id: string }>(
				`SELECT id FROM "${ctx!.schema}".dead_letters`,
			);
			await adminQuery(
				`WITH changed AS (UPDATE "${ctx!.schema}".dead_letters SET status = 'replay_requested' WHERE id = $1 RETURNING id)
			 INSERT INTO "${ctx!.schema}".dead_letter_events (dead_letter_id, actor, from_status, to_status, reason) SELECT id, 'maria@sales-ops', 'new', 'replay_requested', 'country code added to the mapping' FROM changed`,
				[record.id],
			);
			const replayed = await runReplay();
			await waitFor(
				'the record replayed',
				async () =>
					(
						await adminQuery<{ status: string }>(
							`SELECT status FROM "${ctx!.schema}".dead_letters WHERE id = $1`,
							[record.id],
						)
					)[0].status === 'replayed'
						? true
						: undefined,
				60_000,
			).catch(async (error: unknown) => {
				throw new Error(`${String(error)}; ${await whyNotReplayed(record.id, replayed)}`);
			});
			expect(demo.contacts).toHaveLength(1);
			// The contact is routed to its desk by a conditional write on the version the upsert made.
			expect(demo.contacts[0]).toMatchObject({
				email: 'ana@acme.io',
				phone: '+491512345678',
				company: 'Acme',
				writes: 1,
				owner: 'key-accounts',
				version: 2,
			});
			expect(demo.ownerChanges).toEqual([
				{
					key: 'form-7f3a:crm-owner',
					contactId: demo.contacts[0].id,
					owner: 'key-accounts',
					by: 'routing',
					version: 2,
				},
			]);
			expect(demo.enrichCalls).toBe(2);
			const history = await adminQuery<{ actor: string; to_status: string }>(
				`SELECT actor, to_status FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
				[record.id],
			);
			expect(history.map((h) => h.to_status)).toEqual([
				'new',
				'replay_requested',
				'being_fixed',
				'replayed',
			]);
		});

		it("an old retry of the owner assignment after a person's reassignment is refused and parked as a conflict: the person's choice stands", async () => {
			const lead = {
				submissionId: 'form-bea',
				email: 'bea@globex.com',
				name: 'Bea Kim',
				phone: '+4930555000',
			};
			const ownerKey = 'form-bea:crm-owner';
			const recordOf = async () =>
				(
					await adminQuery<Record<string, unknown>>(
						`SELECT * FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1 ORDER BY parked_at`,
						[ownerKey],
					)
				).at(-1);
			// The CRM's owner endpoint is down while the lead runs: the contact is written, its owner not.
			demo.faults.ownerUnavailable = 1_000;
			try {
				await ctx!.n8n.api.webhook('lead-form', lead);
				await waitFor(
					'the assignment parked',
					async () => (await recordOf()) ?? undefined,
					120_000,
				);
			} finally {
				demo.faults.ownerUnavailable = 0;
			}
			const parked = (await recordOf())!;
			expect(parked).toMatchObject({ step: 'Assign Owner', error_class: 'exhausted' });
			const contact = demo.contacts.find((c) => c.email === lead.email)!;
			expect(contact).toMatchObject({ version: 1 });
			expect(contact.owner).toBeUndefined();

			// Meanwhile a sales manager gives the contact to Maria in the CRM: a newer decision.
			demo.reassign(lead.email, 'maria');

			// Someone replays the parked assignment: the old retry, built on version 1.
			await adminQuery(
				`UPDATE "${ctx!.schema}".dead_letters SET status = 'replay_requested' WHERE id = $1`,
				[parked.id],
			);
			await runReplay();
			await waitFor(
				'the conflict parked',
				async () => ((await recordOf())?.error_class === 'conflict' ? true : undefined),
				120_000,
			);
			const conflict = (await recordOf())!;
			expect(conflict).toMatchObject({
				step: 'Assign Owner',
				error_class: 'conflict',
				error_status: 412,
				status: 'new',
			});
			expect(String(conflict.error_message)).toContain('expected If-Match: 1');
			expect(String(conflict.error_message)).toContain('the target holds "2"');
			// The CRM keeps the person's value; the routing never wrote to this contact.
			expect(demo.contacts.find((c) => c.email === lead.email)).toMatchObject({
				owner: 'maria',
				version: 2,
			});
			expect(demo.ownerChanges.filter((c) => c.contactId === contact.id)).toEqual([
				{ contactId: contact.id, owner: 'maria', by: 'a person', version: 2 },
			]);
			// The contact was written once, by the first run; the replay answered it from its key.
			expect(demo.effects.filter((e) => e.email === lead.email)).toHaveLength(1);
		});

		it('a lead without an e-mail fails validation at the first step and is parked as invalid, naming the field', async () => {
			const alertsBefore = demo.alerts.length;
			await ctx!.n8n.api.webhook('lead-form', { submissionId: 'form-no-mail', name: 'Bo' });
			await waitFor(
				'the invalid lead parked',
				async () =>
					(
						await adminQuery(
							`SELECT 1 FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'form-no-mail'`,
						)
					).length > 0 || undefined,
				60_000,
			);
			const [record] = await adminQuery<Record<string, unknown>>(
				`SELECT * FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'form-no-mail'`,
			);
			expect(record).toMatchObject({
				step: 'Claim Submission',
				error_class: 'invalid',
				error_message: 'field "body.email" is missing',
				impact: 'lead rejected at the door',
			});
			expect((record.payload as { body: unknown }).body).toEqual({
				submissionId: 'form-no-mail',
				name: 'Bo',
			});
			expect(demo.contacts.filter((c) => c.name === 'Bo')).toEqual([]);
			// Park's output names the item: the alert it feeds says which workflow, item and impact.
			await waitFor(
				'the alert',
				async () => (raisedSince(alertsBefore).length > 0 ? true : undefined),
				60_000,
			);
			const alert = raisedSince(alertsBefore)[0] as { text: string };
			expect(alert.text.split('\n')[0]).toBe(
				'Reliability: Worked example, lead routing: lead rejected at the door (form-no-mail)',
			);
			expect(alert.text).toContain('Why: field "body.email" is missing');
		});

		it('while the CRM integration is paused, a lead is held, not sent, and nobody is paged', async () => {
			await adminQuery(
				`INSERT INTO "${ctx!.schema}".pauses (scope, name, paused, changed_by, reason) VALUES ('integration', 'crm', true, 'ops', 'CRM maintenance')
				 ON CONFLICT (scope, name) DO UPDATE SET paused = true`,
			);
			try {
				const alertsBefore = demo.alerts.length;
				const alertRunsBefore = (await ctx!.n8n.api.executions(ALERT)).length;
				const contactsBefore = demo.contacts.length;
				await ctx!.n8n.api.webhook('lead-form', {
					submissionId: 'form-paused',
					email: 'pia@acme.io',
					name: 'Pia',
					phone: '+49 151 1111111',
				});
				// The write's Failed output feeds the Alert workflow, which runs and sends nothing.
				await ctx!.n8n.api.waitForExecutions(ALERT, alertRunsBefore + 1, 120_000);
				const [held] = await adminQuery<{ status: string; hold_reason: string }>(
					`SELECT status, hold_reason FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'form-paused:crm-upsert'`,
				);
				expect(held).toEqual({ status: 'held', hold_reason: 'pause' });
				expect(demo.contacts).toHaveLength(contactsBefore);
				await new Promise((resolve) => setTimeout(resolve, 2_000));
				expect(raisedSince(alertsBefore)).toEqual([]);
			} finally {
				await adminQuery(`UPDATE "${ctx!.schema}".pauses SET paused = false WHERE name = 'crm'`);
			}
		});

		it('a poison message (the CRM down throughout) is parked as exhausted after its attempts, and alerted once', async () => {
			demo.faults.crmUnavailable = 1_000;
			const alertsBefore = demo.alerts.length;
			try {
				await ctx!.n8n.api.webhook('lead-form', {
					submissionId: 'form-poison',
					email: 'cy@example.org',
					name: 'Cy',
					phone: '+4930123',
				});
				await waitFor(
					'the poison lead parked',
					async () =>
						(
							await adminQuery(
								`SELECT 1 FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'form-poison:crm-upsert'`,
							)
						).length > 0 || undefined,
					120_000,
				);
			} finally {
				demo.faults.crmUnavailable = 0;
			}
			const [record] = await adminQuery<Record<string, unknown>>(
				`SELECT * FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = 'form-poison:crm-upsert'`,
			);
			expect(record).toMatchObject({ error_class: 'exhausted', error_status: 503, attempts: 5 });
			expect(String(record.error_message)).toMatch(
				/CRM maintenance, try again later \(gave up after 5 attempts|deadline/,
			);
			await waitFor(
				'the alert',
				async () => (raisedSince(alertsBefore).length > 0 ? true : undefined),
				30_000,
			);
			await new Promise((resolve) => setTimeout(resolve, 2_000));
			const raised = raisedSince(alertsBefore) as Array<{ text: string }>;
			expect(raised).toHaveLength(1);
			expect(raised[0].text.split('\n')[0]).toContain('(form-poison:crm-upsert)');
			expect(demo.contacts.filter((c) => c.email === 'cy@example.org')).toEqual([]);
		});

		it("the daily digest's content for a seeded day", async () => {
			// A seeded day: three more parked yesterday with one reason, one resolved after two hours.
			await adminQuery(
				`INSERT INTO "${ctx!.schema}".dead_letters (workflow_id, workflow_name, step, item_key, idempotency_key, error_class, error_message, owner, status, payload, parked_at, closed_at, expires_at)
			 SELECT 'wf-billing', 'Invoice posting', 'Post to Ledger', 'key:inv-' || g, 'inv-' || g, 'permanent', 'ledger: period closed', 'finance',
			        CASE WHEN g = 1 THEN 'resolved' ELSE 'new' END, '{}'::json,
			        date_trunc('day', now()) - interval '12 hours', CASE WHEN g = 1 THEN date_trunc('day', now()) - interval '10 hours' END, now() + interval '90 days'
			 FROM generate_series(1, 3) g`,
			);
			const before = demo.alerts.length;
			await ctx!.n8n.api.webhook('reliability-digest', {});
			await waitFor(
				'the digest at the sink',
				async () => (raisedSince(before).length > 0 ? true : undefined),
				60_000,
			);
			const digest = raisedSince(before)[0] as { kind: string; text: string };
			expect(digest.kind).toBe('digest');
			const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
			expect(digest.text).toContain(`${yesterday} 3`);
			expect(digest.text).toContain('ledger: period closed (3)');
			const [rollup] = await adminQuery<{ hours: string }>(
				`SELECT to_char(sum(closed_seconds) / sum(closed) / 3600, 'FM990.0') AS hours FROM "${ctx!.schema}".dead_letter_daily WHERE day > (now() AT TIME ZONE 'UTC')::date - 7`,
			);
			expect(digest.text).toContain(`average time to resolution ${rollup.hours} h`);
			expect(digest.text).toMatch(/Open by owner: .*finance 2/);
			expect(digest.text).toContain('Invoice posting / Post to Ledger: ledger: period closed');
		});

		it('the heartbeat watch alerts for a workflow that stopped, not for one that runs, and once', async () => {
			await adminQuery(
				`INSERT INTO "${ctx!.schema}".heartbeats (name, period_seconds, grace_seconds, last_beat_at) VALUES
			 ('nightly invoice import', 3600, 600, now() - interval '3 hours'), ('hourly CRM sync', 3600, 600, now() - interval '5 minutes')`,
			);
			const before = demo.alerts.length;
			await ctx!.n8n.api.webhook('reliability-heartbeat-watch', {});
			await waitFor(
				'the heartbeat alert',
				async () => (raisedSince(before).length > 0 ? true : undefined),
				60_000,
			);
			await ctx!.n8n.api.webhook('reliability-heartbeat-watch', {});
			await new Promise((r) => setTimeout(r, 3_000));
			// A stopped schedule pages (its severity is "page"): a PagerDuty Events v2 trigger.
			const alerts = raisedSince(before) as Array<{
				event_action: string;
				payload: { summary: string; severity: string };
			}>;
			expect(alerts).toHaveLength(1);
			expect(alerts[0]).toMatchObject({
				event_action: 'trigger',
				payload: {
					summary:
						'nightly invoice import: scheduled workflow stopped running (heartbeat:nightly invoice import)',
					severity: 'critical',
				},
			});
		});

		it('a poison record in a Replay batch ends alone, back in new with why; the rest of the batch replays', async () => {
			const store = new Store(storeConfig(ctx!.schema));
			try {
				// The poison first: its workflow was deleted since it was parked, so its re-run cannot
				// start. Then a lead whose replay succeeds.
				const lead = {
					submissionId: 'form-c0de',
					email: 'cody@initech.example',
					name: 'Cody Ng',
					phone: '+4930123456',
				};
				const [poison] = parkedOrThrow(
					await parkItems(store, [
						{
							workflowId: 'relDeletedWorkflow',
							step: 'Upsert Contact',
							idempotencyKey: 'form-gone:crm-upsert',
							errorClass: 'permanent',
							errorMessage: 'parked before its workflow was deleted',
							payload: {
								lead: { ...lead, submissionId: 'form-gone', email: 'gone@initech.example' },
							},
						},
					]),
				);
				const [good] = parkedOrThrow(
					await parkItems(store, [
						{
							workflowId: EXAMPLE,
							step: 'Upsert Contact',
							idempotencyKey: 'form-c0de:crm-upsert',
							errorClass: 'exhausted',
							errorMessage: 'CRM down for the night',
							payload: { lead },
						},
					]),
				);
				for (const record of [poison, good])
					await updateDeadLetterStatus(store, {
						id: record.id,
						to: 'replay_requested',
						actor: 'maria@sales-ops',
						reason: 'CRM is back',
					});
				await runReplay();
				const statusOf = async (id: string) =>
					(
						await adminQuery<{ status: string }>(
							`SELECT status FROM "${ctx!.schema}".dead_letters WHERE id = $1`,
							[id],
						)
					)[0].status;
				await waitFor(
					'the batch done',
					async () =>
						(await statusOf(good.id)) === 'replayed' && (await statusOf(poison.id)) === 'new'
							? true
							: undefined,
					120_000,
				);
				// The good lead is in the CRM once; the poison record says why its replay failed.
				expect(demo.effects.filter((e) => e.email === lead.email)).toHaveLength(1);
				const [last] = await adminQuery<{ actor: string; to_status: string; reason: string }>(
					`SELECT actor, to_status, reason FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id DESC LIMIT 1`,
					[poison.id],
				);
				expect(last).toMatchObject({ actor: 'replay workflow', to_status: 'new' });
				expect(last.reason).toMatch(/^the re-run failed: /);
			} finally {
				await store.close();
			}
		});

		it('a replayed record whose failed step now passes ends replayed, though a later step fails and parks its own letter', async () => {
			const store = new Store(storeConfig(ctx!.schema));
			try {
				// The enrichment outcome was unknown; the CRM refuses the lead's address (the mapping
				// fixed earlier in this file passes any phone), so the re-run passes Enrich and fails at
				// Upsert Contact, ending on the Alert path.
				demo.faults = {
					...demo.faults,
					enrichTimeouts: 0,
					crmUnavailable: 0,
					rejectEmails: ['eva@initech.example'],
				};
				const lead = {
					submissionId: 'form-e4a1',
					email: 'eva@initech.example',
					name: 'Eva Berg',
					phone: '030 1234567',
				};
				const [enrich] = parkedOrThrow(
					await parkItems(store, [
						{
							workflowId: EXAMPLE,
							step: 'Enrich',
							idempotencyKey: `${lead.submissionId}:enrich`,
							errorClass: 'unknown_outcome',
							errorMessage: 'timeout of 2000ms exceeded (gave up after 5 attempts)',
							payload: { lead },
						},
					]),
				);
				await updateDeadLetterStatus(store, {
					id: enrich.id,
					to: 'replay_requested',
					actor: 'maria@sales-ops',
					reason: 'enrichment is back',
				});
				await runReplay();
				const letters = async () =>
					await adminQuery<{ id: string; idempotency_key: string; status: string }>(
						`SELECT id, idempotency_key, status FROM "${ctx!.schema}".dead_letters WHERE idempotency_key LIKE $1 ORDER BY id`,
						[`${lead.submissionId}:%`],
					);
				const settled = await waitFor(
					'the enrich record settled and the upsert parked',
					async () => {
						const now = await letters();
						return now.length === 2 && now[0].status !== 'being_fixed' ? now : undefined;
					},
					120_000,
				).catch(async (error: unknown) => {
					throw new Error(`${String(error)}; ${await whyNotReplayed(enrich.id, undefined)}`);
				});
				// One open letter for the item, at the step that failed now; the enrichment ran once.
				expect(settled.map((l) => [l.idempotency_key, l.status])).toEqual([
					[`${lead.submissionId}:enrich`, 'replayed'],
					[`${lead.submissionId}:crm-upsert`, 'new'],
				]);
				expect(demo.effects.filter((e) => e.email === lead.email)).toHaveLength(0);
			} finally {
				demo.faults = { ...demo.faults, rejectEmails: [] };
				await store.close();
			}
		});

		it('housekeeping run now deletes what is past retention and keeps what is in progress', async () => {
			await adminQuery(
				`INSERT INTO "${ctx!.schema}".processed_events (consumer, event_id, status, lease_until, expires_at)
				 SELECT 'hk', 'old-' || i, 'done', now() - interval '40 days', now() - interval '1 day' FROM generate_series(1, 5) i
				 UNION ALL SELECT 'hk', 'open', 'in_progress', now() + interval '1 hour', now() - interval '1 day';
				 INSERT INTO "${ctx!.schema}".idempotency_keys (scope, key, fingerprint, status, lease_until, expires_at)
				 SELECT 'hk', 'old-' || i, 'f', 'succeeded', now() - interval '40 days', now() - interval '1 day' FROM generate_series(1, 2) i`,
			);
			const response = await ctx!.n8n.api.webhook('reliability-housekeeping', {});
			expect(response.status).toBe(200);
			const body = response.body as { deleted: Record<string, number>; total: number };
			expect(body.deleted).toMatchObject({ processedEvents: 5, idempotencyKeys: 2 });
			expect(body.total).toBeGreaterThanOrEqual(7);
			const left = await adminQuery<{ event_id: string }>(
				`SELECT event_id FROM "${ctx!.schema}".processed_events WHERE consumer = 'hk'`,
			);
			expect(left).toEqual([{ event_id: 'open' }]);
		});
	},
);
