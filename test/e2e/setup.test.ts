import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DemoApi } from '../../demo/api';
import { SHIPPED_DEMO_URL } from '../../dev/bundled';
import { n8nVersionsUnderTest } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import { DEFAULT_OWNER, type Execution, nodeOutputs } from '../../dev/harness/rest';
import { STORE_CREDENTIAL_ID } from '../../dev/workflows';
import { bundledWorkflowFiles } from '../../lib/setup';
import { launchChromium } from '../helpers/chromium';
import { adminQuery } from '../helpers/store';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Setup as a new user meets it: n8n with the package installed from its tarball into a fresh
 * user folder (SQLite), a Reliability Store credential, an n8n API key and its credential, a
 * scratch workflow (Manual Trigger, then Reliability Control > Setup) run from the editor in
 * Chromium. Afterwards every bundled workflow is in n8n once, wired to the others' IDs, on
 * credentials that exist, published in order and quiet; the user points the worked example at
 * their services, runs Setup again (their change stays), and the README's curl twice gives one
 * contact, a bad lead one dead letter and one alert.
 */
jest.setTimeout(900_000);

const BUNDLED = Object.values(bundledWorkflowFiles()).map(
	(text) =>
		JSON.parse(text) as {
			id: string;
			name: string;
			nodes: Array<{ type: string }>;
			settings: Record<string, unknown>;
		},
);
const EXAMPLE_NAME = 'Reliability: Worked example, lead routing';
const ALERT_NAME = 'Reliability: Alert';

/** Workflows that run on a timer or serve requests: n8n keeps none of their successful runs. */
const QUIET = BUNDLED.filter(
	(w) =>
		w.name !== EXAMPLE_NAME && w.nodes.some((n) => /\.(scheduleTrigger|webhook)$/.test(n.type)),
).map((w) => w.name);

interface SavedNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
	disabled?: boolean;
}
interface SavedWorkflow {
	id: string;
	name: string;
	active: boolean;
	activeVersionId?: string | null;
	nodes: SavedNode[];
	settings: Record<string, unknown>;
}

const demo = new DemoApi();
let browser: Browser;
beforeAll(async () => {
	await demo.start();
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
	await demo.stop();
});

describe.each(n8nVersionsUnderTest())(
	'Setup installs the bundled workflows in n8n %s',
	(version) => {
		const major = Number(version.split('.')[0]);
		let ctx: E2eContext | undefined;
		let context: BrowserContext;
		let page: Page;
		let scratchId = '';
		let apiCredential: { id: string; name: string } | undefined;

		const rest = <T>(method: string, path: string, body?: unknown) =>
			ctx!.n8n.api.rest<T>(method, path, body);
		const workflows = async () => {
			const listed = await rest<SavedWorkflow[] | { data: SavedWorkflow[] }>('GET', '/workflows');
			const summaries = Array.isArray(listed) ? listed : listed.data;
			return await Promise.all(
				summaries.map(async (w) => await rest<SavedWorkflow>('GET', `/workflows/${w.id}`)),
			);
		};
		const byName = async (name: string) => {
			const found = (await workflows()).filter((w) => w.name === name);
			expect(found).toHaveLength(1);
			return found[0];
		};
		const published = (w: SavedWorkflow) => (major >= 2 ? Boolean(w.activeVersionId) : w.active);

		/** Runs a workflow from the editor, as a user presses "Execute workflow". */
		const runInEditor = async (workflowId: string): Promise<Execution> => {
			const before = (await ctx!.n8n.api.executions(workflowId)).length;
			await page.goto(`${ctx!.n8n.baseUrl}/workflow/${workflowId}`, { waitUntil: 'networkidle' });
			await page.locator('[data-test-id="execute-workflow-button"]').first().click();
			const [run] = (await ctx!.n8n.api.waitForExecutions(workflowId, before + 1, 300_000)).slice(
				-1,
			);
			const error = run.data.resultData.error;
			if (run.status !== 'success')
				throw new Error(
					`The run ${run.id} of ${workflowId} ended ${run.status}: ${error?.message} (${error?.description})`,
				);
			return run;
		};
		const runSetupInEditor = async (): Promise<Execution> => await runInEditor(scratchId);

		beforeAll(async () => {
			demo.reset();
			ctx = await startWithPackage(version, 'setup', [], [], []);

			// What a user does in Settings > n8n API, then Credentials > New.
			const scopes = await rest<string[]>('GET', '/api-keys/scopes').catch(() => undefined);
			const key = await rest<{ rawApiKey: string }>('POST', '/api-keys', {
				label: `setup ${randomUUID()}`,
				expiresAt: null,
				...(scopes ? { scopes } : {}),
			});
			const credential = async (name: string, type: string, data: Record<string, unknown>) =>
				await rest<{ id: string; name: string }>('POST', '/credentials', { name, type, data });
			const api = await credential('n8n API', 'n8nApi', {
				apiKey: key.rawApiKey,
				baseUrl: `${ctx.n8n.baseUrl}/api/v1`,
			});
			apiCredential = api;
			const login = await credential('Console sign-in', 'httpBasicAuth', {
				user: 'maria',
				password: 'console-pass-1',
			});
			const token = await credential('Prometheus token', 'httpHeaderAuth', {
				name: 'Authorization',
				value: 'Bearer scrape-token-1',
			});
			const scratch = await rest<{ id: string }>('POST', '/workflows', {
				name: 'Set up reliability',
				active: false,
				nodes: [
					{
						id: randomUUID(),
						name: 'When clicking Execute workflow',
						type: 'n8n-nodes-base.manualTrigger',
						typeVersion: 1,
						position: [0, 0],
						parameters: {},
					},
					{
						id: randomUUID(),
						name: 'Install Bundled Workflows',
						type: 'n8n-nodes-reliability.reliabilityControl',
						typeVersion: 1,
						position: [240, 0],
						parameters: { resource: 'setup', operation: 'installWorkflows' },
						credentials: {
							reliabilityStoreApi: { id: STORE_CREDENTIAL_ID, name: 'Reliability Store' },
							n8nApi: { id: api.id, name: api.name },
							httpBasicAuth: { id: login.id, name: login.name },
							httpHeaderAuth: { id: token.id, name: token.name },
						},
					},
				],
				connections: {
					'When clicking Execute workflow': {
						main: [[{ node: 'Install Bundled Workflows', type: 'main', index: 0 }]],
					},
				},
				settings: { executionOrder: 'v1' },
			});
			scratchId = scratch.id;

			context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
			const signIn = await context.request.post(`${ctx.n8n.baseUrl}/rest/login`, {
				data: {
					email: DEFAULT_OWNER.email,
					emailOrLdapLoginId: DEFAULT_OWNER.email,
					password: DEFAULT_OWNER.password,
				},
			});
			expect(signIn.status()).toBe(200);
			page = await context.newPage();
		});

		afterAll(async () => {
			await context?.close();
			await stopAndClean(ctx);
		});

		it('one run from the editor leaves every bundled workflow in n8n, wired, credentialed, published and quiet', async () => {
			const run = await runSetupInEditor();
			expect(run.status).toBe('success');
			const [report] = nodeOutputs(run, 'Install Bundled Workflows');
			expect(report.map((r) => r.name).sort()).toEqual(BUNDLED.map((w) => w.name).sort());
			for (const line of report) expect(line).toMatchObject({ action: 'created', needs: [] });

			const saved = await workflows();
			const ids = new Map(saved.map((w) => [w.name, w.id]));
			const credentialIds = new Set(
				(await rest<Array<{ id: string }>>('GET', '/credentials')).map((c) => c.id),
			);
			expect(saved.map((w) => w.name).sort()).toEqual(
				[...BUNDLED.map((w) => w.name), 'Set up reliability'].sort(),
			);
			for (const workflow of saved.filter((w) => w.id !== scratchId)) {
				// Every credential a node names exists; no node is left on a shipped placeholder.
				for (const node of workflow.nodes)
					for (const ref of Object.values(node.credentials ?? {}))
						expect({ node: node.name, exists: credentialIds.has(ref.id) }).toEqual({
							node: node.name,
							exists: true,
						});
				// Every Execute Workflow node calls a workflow that exists here (or its records' own).
				for (const node of workflow.nodes.filter((n) => n.type.endsWith('.executeWorkflow'))) {
					const target = node.parameters.workflowId as string | { value: string };
					const value = typeof target === 'string' ? target : target.value;
					if (!value.startsWith('=')) expect([...ids.values()]).toContain(value);
				}
				const bundled = BUNDLED.find((w) => w.name === workflow.name)!;
				const triggered = bundled.nodes.some((n) => /\.(scheduleTrigger|webhook)$/.test(n.type));
				const fromEditor = bundled.nodes.some((n) => n.type.endsWith('.manualTrigger'));
				// 1.x runs a called-only workflow without activation; 2.x runs only published ones.
				// One run by a person from the editor has nothing to publish.
				if (fromEditor)
					expect({ [workflow.name]: published(workflow) }).toEqual({ [workflow.name]: false });
				else if (triggered || major >= 2)
					expect({ [workflow.name]: published(workflow) }).toEqual({
						[workflow.name]: true,
					});
				if (QUIET.includes(workflow.name))
					expect({ [workflow.name]: workflow.settings.saveDataSuccessExecution }).toEqual({
						[workflow.name]: 'none',
					});
			}
			const example = saved.find((w) => w.name === EXAMPLE_NAME)!;
			expect(example.settings.errorWorkflow).toBe(ids.get('Reliability: Error handler'));
		});

		it('a second run keeps what the user changed, updates the rest, and publishes the new versions', async () => {
			// The user points the worked example and the alerts at their own services.
			for (const name of [EXAMPLE_NAME, ALERT_NAME]) {
				const { id } = await byName(name);
				await ctx!.n8n.api.updateWorkflow(id, (workflow) => {
					workflow.nodes = JSON.parse(
						JSON.stringify(workflow.nodes).split(SHIPPED_DEMO_URL).join(demo.url),
					) as typeof workflow.nodes;
				});
			}
			const before = await workflows();

			const run = await runSetupInEditor();
			expect(run.status).toBe('success');
			const [report] = nodeOutputs(run, 'Install Bundled Workflows');
			for (const line of report) expect(line).toMatchObject({ action: 'updated', needs: [] });
			// Exactly the nodes the user changed are theirs; every other node took the package's.
			const kept = Object.fromEntries(report.map((r) => [r.name, r.kept]));
			expect(kept).toEqual({
				...Object.fromEntries(BUNDLED.map((w) => [w.name, []])),
				[EXAMPLE_NAME]: [
					'Enrich: your parameters',
					'Upsert Contact: your parameters',
					'Assign Owner: your parameters',
				],
				// The page and the channel both posted to the demo sink: both are the user's now.
				[ALERT_NAME]: ['Send (HTTP): your parameters', 'Page (HTTP): your parameters'],
			});

			const after = await workflows();
			expect(after.map((w) => w.id).sort()).toEqual(before.map((w) => w.id).sort());
			const text = JSON.stringify(await byName(EXAMPLE_NAME));
			expect(text).toContain(demo.url);
			expect(text).not.toContain(SHIPPED_DEMO_URL);
			for (const workflow of after.filter((w) => w.id !== scratchId)) {
				const bundled = BUNDLED.find((w) => w.name === workflow.name)!;
				const triggered = bundled.nodes.some((n) => /\.(scheduleTrigger|webhook)$/.test(n.type));
				const fromEditor = bundled.nodes.some((n) => n.type.endsWith('.manualTrigger'));
				if (!fromEditor && (triggered || major >= 2))
					expect({ [workflow.name]: published(workflow) }).toEqual({ [workflow.name]: true });
			}
		});

		it("the README's curl twice gives one contact; a lead the CRM rejects gives one dead letter and one alert", async () => {
			const lead = {
				submissionId: 'form-setup-1',
				email: 'lea@acme.io',
				name: 'Lea Roth',
				phone: '+49 151 2345678',
			};
			for (let i = 0; i < 2; i++)
				expect((await ctx!.n8n.api.webhook('lead-form', lead)).status).toBe(200);
			await waitFor(
				'the contact in the CRM',
				async () => (demo.contacts.length > 0 ? true : undefined),
				120_000,
			);
			const bad = {
				...lead,
				submissionId: 'form-setup-2',
				email: 'tom@acme.io',
				phone: '0151 999',
			};
			for (let i = 0; i < 2; i++)
				expect((await ctx!.n8n.api.webhook('lead-form', bad)).status).toBe(200);
			await waitFor('one alert', async () => (demo.alerts.length > 0 ? true : undefined), 120_000);
			// Both deliveries of each lead have finished before the destinations are read.
			const { id } = await byName(EXAMPLE_NAME);
			await ctx!.n8n.api.waitForExecutions(id, 4, 120_000);
			await new Promise((resolve) => setTimeout(resolve, 3_000));

			expect(demo.contacts.map((c) => c.email)).toEqual(['lea@acme.io']);
			const letters = await adminQuery<{ idempotency_key: string; status: string }>(
				`SELECT idempotency_key, status FROM "${ctx!.schema}".dead_letters`,
			);
			expect(letters).toEqual([{ idempotency_key: 'form-setup-2:crm-upsert', status: 'new' }]);
			expect(demo.alerts).toHaveLength(1);
			expect((demo.alerts[0] as { text: string }).text).toContain('form-setup-2:crm-upsert');
		});

		it("an audit of the instance (n8n's Workflow > Get Many, then Audit > Generate) keeps every workflow's audit", async () => {
			const audit = await rest<{ id: string }>('POST', '/workflows', {
				name: 'Audit my workflows',
				active: false,
				nodes: [
					{
						id: randomUUID(),
						name: 'When clicking Execute workflow',
						type: 'n8n-nodes-base.manualTrigger',
						typeVersion: 1,
						position: [0, 0],
						parameters: {},
					},
					{
						id: randomUUID(),
						name: 'Get Many Workflows',
						type: 'n8n-nodes-base.n8n',
						typeVersion: 1,
						position: [240, 0],
						parameters: { resource: 'workflow', operation: 'getAll', returnAll: true, filters: {} },
						credentials: { n8nApi: apiCredential! },
					},
					{
						id: randomUUID(),
						name: 'Audit',
						type: 'n8n-nodes-reliability.reliabilityControl',
						typeVersion: 1,
						position: [480, 0],
						parameters: { resource: 'audit', operation: 'generate' },
						credentials: {
							reliabilityStoreApi: { id: STORE_CREDENTIAL_ID, name: 'Reliability Store' },
						},
					},
				],
				connections: {
					'When clicking Execute workflow': {
						main: [[{ node: 'Get Many Workflows', type: 'main', index: 0 }]],
					},
					'Get Many Workflows': { main: [[{ node: 'Audit', type: 'main', index: 0 }]] },
				},
				settings: { executionOrder: 'v1' },
			});
			const run = await runInEditor(audit.id);
			const out = nodeOutputs(run, 'Audit')[0] as Array<{
				workflowName: string;
				score: number;
				editorUrl: string;
			}>;
			const inN8n = await workflows();
			expect(out.map((o) => o.workflowName).sort()).toEqual(inN8n.map((w) => w.name).sort());

			// The destination: one stored audit per workflow in n8n, the worked example passing.
			const rows = await adminQuery<{
				workflow_id: string;
				workflow_name: string;
				score: number;
				rules: string[];
			}>(
				`SELECT workflow_id, workflow_name, score,
				        (SELECT coalesce(array_agg(f->>'rule' ORDER BY f->>'rule'), '{}') FROM jsonb_array_elements(findings) f) AS rules
				 FROM "${ctx!.schema}".workflow_audits`,
			);
			expect(rows.map((r) => r.workflow_id).sort()).toEqual(inN8n.map((w) => w.id).sort());
			const example = rows.find((r) => r.workflow_name === EXAMPLE_NAME)!;
			expect(example).toMatchObject({ score: 100, rules: [] });
			expect(rows.find((r) => r.workflow_name === 'Reliability: Recover')!.rules).toEqual([
				'no-error-workflow',
				'schedule-without-heartbeat',
			]);
			const exampleItem = out.find((o) => o.workflowName === EXAMPLE_NAME)!;
			expect(exampleItem.editorUrl.endsWith(`/workflow/${(await byName(EXAMPLE_NAME)).id}`)).toBe(
				true,
			);

			// Where an operator reads it: the console's Audit page, then the worked example's.
			const viewer = await browser.newContext({
				httpCredentials: { username: 'maria', password: 'console-pass-1' },
			});
			try {
				const auditTab = await viewer.newPage();
				await auditTab.goto(`${ctx!.n8n.baseUrl}/webhook/reliability-console?view=audit`);
				expect(await auditTab.locator('table.audits tr.audited').count()).toBe(rows.length);
				await auditTab.click(`table.audits a:has-text("${EXAMPLE_NAME}")`);
				await auditTab.waitForSelector('table.inventory');
				expect(await auditTab.locator('b.score').textContent()).toBe('100');
				expect(
					await auditTab.locator('table.inventory tr.step td:first-child').allTextContents(),
				).toEqual(
					(
						await adminQuery<{ step: string }>(
							`SELECT s->>'step' AS step FROM "${ctx!.schema}".workflow_audits, jsonb_array_elements(inventory) s WHERE workflow_name = $1`,
							[EXAMPLE_NAME],
						)
					).map((r) => r.step),
				);
			} finally {
				await viewer.close();
			}
		});

		it('the fire drill, started from the console, passes on the worked example and fails, with the reason, on an unsafe copy', async () => {
			type DrillReport = {
				passed: boolean;
				tests: Array<{ test: string; passed: boolean; reason: string; event: string }>;
			};
			const drill = await byName('Reliability: Fire drill');
			const drillNode = (change: Record<string, unknown>) =>
				ctx!.n8n.api.updateWorkflow(drill.id, (workflow) => {
					workflow.nodes = JSON.parse(
						JSON.stringify(workflow.nodes).split(SHIPPED_DEMO_URL).join(demo.url),
					) as typeof workflow.nodes;
					const node = workflow.nodes.find((n) => n.name === 'Fire Drill')!;
					node.parameters = { ...(node.parameters as object), ...change };
				});
			await drillNode({});

			// The operator switches the CRM's drill mode on in the console.
			const operator = await browser.newContext({
				httpCredentials: { username: 'maria', password: 'console-pass-1' },
			});
			try {
				const controls = await operator.newPage();
				await controls.goto(`${ctx!.n8n.baseUrl}/webhook/reliability-console?view=controls`);
				await controls.fill('form.drill-form input[name="name"]', 'crm');
				await controls.fill('form.drill-form input[name="minutes"]', '20');
				await controls.fill('form.drill-form input[name="note"]', 'pre-launch drill');
				await controls.click('form.drill-form button[type="submit"]');
				await controls.waitForSelector('table.drills tr.drill[data-name="crm"]');
				expect(
					await controls.locator('table.drills tr.drill[data-name="crm"] td').nth(1).textContent(),
				).toBe('on');
			} finally {
				await operator.close();
			}
			const [on] = await adminQuery<{ started_by: string; minutes: number }>(
				`SELECT started_by, round(extract(epoch FROM expires_at - started_at) / 60)::int AS minutes
				 FROM "${ctx!.schema}".drills WHERE integration = 'crm' AND expires_at > now()`,
			);
			expect(on).toEqual({ started_by: 'maria', minutes: 20 });

			const passing = nodeOutputs(await runInEditor(drill.id), 'Report')[0][0] as DrillReport;
			expect(passing.tests.map((t) => [t.test, t.passed, t.passed ? '' : t.reason])).toEqual([
				['duplicate_delivery', true, ''],
				['timeout_after_commit', true, ''],
				['validation_error', true, ''],
				['replay', true, ''],
			]);
			expect(passing.passed).toBe(true);
			// The destination: one committed upsert per event that should have one, none twice.
			const effectsOf = (event: string) =>
				demo.effects.filter((e) => e.email === `${event}@drill.example`).length;
			expect(passing.tests.map((t) => effectsOf(t.event))).toEqual([1, 1, 1, 1]);
			// The store: the timeout fired on a CRM write, which ended succeeded; the fixed item replayed.
			const [fired] = await adminQuery<{ status: string; attempts: number }>(
				`SELECT k.status, k.attempts FROM "${ctx!.schema}".drills d
				 JOIN "${ctx!.schema}".idempotency_keys k ON k.scope = d.fired_scope AND k.key = d.fired_key
				 WHERE d.integration = 'crm'`,
			);
			expect(fired.status).toBe('succeeded');
			expect(fired.attempts).toBeGreaterThanOrEqual(2);
			const replayed = await adminQuery<{ status: string }>(
				`SELECT status FROM "${ctx!.schema}".dead_letters WHERE idempotency_key = $1`,
				[passing.tests[2].event],
			);
			expect(replayed).toEqual([{ status: 'replayed' }]);
			// The drill's trail: who started it, and the timeout armed and fired for its own event.
			const trail = await adminQuery<{ action: string; actor: string; reason: string | null }>(
				`SELECT action, actor, reason FROM "${ctx!.schema}".drill_events WHERE integration = 'crm' ORDER BY id`,
			);
			expect(trail.map((e) => e.action)).toEqual(['start', 'arm_timeout', 'fire_timeout']);
			expect(trail[0]).toMatchObject({
				actor: 'maria',
				reason: expect.stringMatching(/^pre-launch drill/),
			});
			expect(trail[2].reason).toContain(passing.tests[1].event);

			// An unsafe copy: the CRM writes made by an HTTP Request with Retry On Fail.
			const example = await byName(EXAMPLE_NAME);
			const unsafe = structuredClone(example) as SavedWorkflow & {
				connections: Record<string, unknown>;
				settings: Record<string, unknown>;
			};
			unsafe.nodes = unsafe.nodes
				.filter((n) => n.name !== 'Assign Owner')
				.map((n) =>
					n.name === 'Upsert Contact'
						? {
								...n,
								type: 'n8n-nodes-base.httpRequest',
								typeVersion: 4.2,
								parameters: {
									method: 'POST',
									url: `${demo.url}/crm/contacts`,
									sendBody: true,
									specifyBody: 'json',
									jsonBody:
										'={{ { "email": $json.email, "name": $json.name, "phone": $json.phone, "company": $json.company } }}',
									options: {},
								},
								retryOnFail: true,
								maxTries: 3,
								credentials: undefined,
							}
						: n.name === 'Lead Form'
							? {
									...n,
									webhookId: randomUUID(),
									parameters: { ...n.parameters, path: 'lead-form-unsafe' },
								}
							: n,
				);
			delete unsafe.connections['Assign Owner'];
			unsafe.connections['Upsert Contact'] = { main: [[]] };
			const copy = await rest<{ id: string }>('POST', '/workflows', {
				name: 'Lead routing, unsafe copy',
				active: false,
				nodes: unsafe.nodes.map((n) => ({ ...n, id: randomUUID() })),
				connections: unsafe.connections,
				settings: unsafe.settings,
			});
			await ctx!.n8n.api.activateWorkflow(copy.id);
			await drillNode({ webhookUrl: 'lead-form-unsafe', waitSeconds: 15 });

			const failing = nodeOutputs(await runInEditor(drill.id), 'Report')[0][0] as DrillReport;
			expect(failing.passed).toBe(false);
			const timeout = failing.tests.find((t) => t.test === 'timeout_after_commit')!;
			expect(timeout.passed).toBe(false);
			expect(timeout.reason).toContain(
				'the forced timeout never fired: no Idempotent HTTP Write of integration crm',
			);
			// Nothing armed is left behind for the CRM's next real write.
			const [after] = await adminQuery<{ timeout_armed: boolean }>(
				`SELECT timeout_armed FROM "${ctx!.schema}".drills WHERE integration = 'crm'`,
			);
			expect(after.timeout_armed).toBe(false);
		});
	},
);
