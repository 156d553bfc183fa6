import {
	type ApiWorkflow,
	bundledWorkflowFiles,
	installBundledWorkflows,
	installOrder,
	parseBundled,
	type SetupRecord,
	type SetupRecords,
	type WorkflowApi,
	type WorkflowBody,
} from '../../lib/setup';

/**
 * Setup's plan over the package's own bundled workflows, against an n8n API kept in memory
 * (what n8n does with the bodies is the e2e test's part, test/e2e/setup.test.ts): the order,
 * the rewiring of references to the IDs n8n gives, the credentials, and a second run that
 * updates in place.
 */
class MemoryApi implements WorkflowApi {
	workflows = new Map<string, ApiWorkflow & WorkflowBody>();
	activated: string[] = [];
	/** Published workflows: n8n lists them with `active: true`. */
	active = new Set<string>();
	private next = 1;
	refuseActivation = new Map<string, string>();

	async list() {
		return [...this.workflows.values()].map((w) => ({
			...structuredClone(w),
			active: this.active.has(w.id),
		}));
	}
	async create(body: WorkflowBody) {
		const id = `n8n${this.next++}`;
		this.workflows.set(id, { id, ...structuredClone(body) });
		return { id, name: body.name };
	}
	async update(id: string, body: WorkflowBody) {
		if (!this.workflows.has(id)) throw new Error(`no workflow ${id}`);
		this.workflows.set(id, { id, ...structuredClone(body) });
		return { id, name: body.name };
	}
	async activate(id: string) {
		const refusal = this.refuseActivation.get(id);
		if (refusal) throw new Error(refusal);
		this.activated.push(id);
		this.active.add(id);
	}
	byName(name: string) {
		return [...this.workflows.values()].find((w) => w.name === name)!;
	}
}

/** Setup's records as the store keeps them, here in memory (the store's part: records.ts). */
class MemoryRecords implements SetupRecords {
	saved = new Map<string, SetupRecord>();
	async read() {
		return new Map([...this.saved].map(([id, record]) => [id, structuredClone(record)]));
	}
	async save(record: SetupRecord) {
		this.saved.set(record.bundledId, structuredClone(record));
	}
}

const store = { id: 'cred-store-9', name: 'My store' };
const consoleLogin = { id: 'cred-basic-3', name: 'Console sign-in' };
const metricsToken = { id: 'cred-header-4', name: 'Prometheus token' };
const n8nApi = { id: 'cred-n8n-5', name: 'n8n API' };

const executeTargets = (workflow: WorkflowBody) =>
	workflow.nodes
		.filter((node) => node.type === 'n8n-nodes-base.executeWorkflow')
		.map((node) => node.parameters?.workflowId);

describe('Setup > Install Bundled Workflows', () => {
	const bundled = parseBundled(bundledWorkflowFiles());

	it('orders every workflow after the workflows it calls and its error workflow', () => {
		const order = installOrder(bundled).map((w) => w.id);
		expect(order).toHaveLength(bundled.length);
		const before = (a: string, b: string) =>
			expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
		before('relAlertWorkflow', 'relErrorHandler1');
		before('relAlertWorkflow', 'relRecoverWorkflow');
		before('relAlertWorkflow', 'relLeadRouting01');
		before('relErrorHandler1', 'relLeadRouting01');
		before('relReplayWorkflow', 'relOperatorConsole');
	});

	it('creates each workflow wired to the IDs n8n gave the others, with the user credentials', async () => {
		const api = new MemoryApi();
		const results = await installBundledWorkflows(api, {
			store,
			consoleLogin,
			metricsToken,
			n8nApi,
		});

		expect(results).toHaveLength(bundled.length);
		expect(results.every((r) => r.action === 'created' && r.needs.length === 0)).toBe(true);
		// Published in install order: callees first; the Fire drill is run from the editor.
		expect(api.activated).toEqual(
			results.filter((r) => r.published !== 'runs from the editor').map((r) => r.id),
		);

		const alertId = api.byName('Reliability: Alert').id;
		const errorHandlerId = api.byName('Reliability: Error handler').id;
		const replayId = api.byName('Reliability: Replay').id;
		for (const name of [
			'Reliability: Error handler',
			'Reliability: Heartbeat watch',
			'Reliability: Worked example, lead routing',
		])
			expect(executeTargets(api.byName(name))).toEqual([alertId]);
		// Recover sends the alerts of given-up items and those its sweep of alert issues makes.
		expect(executeTargets(api.byName('Reliability: Recover'))).toEqual([alertId, alertId]);
		expect(executeTargets(api.byName('Reliability: Operator Console'))).toEqual([replayId]);
		// The Replay workflow's target is its records' own workflow: an expression, left alone.
		expect(executeTargets(api.byName('Reliability: Replay'))).toEqual([
			{ __rl: true, mode: 'id', value: '={{ $json.workflowId }}' },
		]);
		expect(api.byName('Reliability: Worked example, lead routing').settings.errorWorkflow).toBe(
			errorHandlerId,
		);

		// No node is left on a credential the user does not have.
		const refs = [...api.workflows.values()].flatMap((w) =>
			w.nodes.flatMap((node) => Object.entries(node.credentials ?? {})),
		);
		expect(refs.length).toBeGreaterThan(15);
		for (const [type, ref] of refs) {
			const expected = {
				reliabilityStoreApi: store,
				httpBasicAuth: consoleLogin,
				httpHeaderAuth: metricsToken,
				n8nApi,
			}[type];
			expect(ref).toEqual(expected);
		}
		// Nothing the public API refuses: no ID, no active flag, only the node fields it takes.
		for (const workflow of api.workflows.values()) {
			expect(Object.keys(workflow).sort()).toEqual(
				['connections', 'id', 'name', 'nodes', 'settings'].sort(),
			);
			for (const node of workflow.nodes) expect(node).not.toHaveProperty('pinData');
		}
	});

	it('leaves the console and metrics unpublished, saying what they need, without their credentials', async () => {
		const api = new MemoryApi();
		const results = await installBundledWorkflows(api, { store });
		const byName = new Map(results.map((r) => [r.name, r]));
		const console = byName.get('Reliability: Operator Console')!;
		expect(console.published).toBe(false);
		expect(console.needs).toEqual([expect.stringMatching(/Basic Auth credential .*Console Login/)]);
		expect(byName.get('Reliability: Metrics')!.needs).toEqual([
			expect.stringMatching(/Header Auth credential .*Metrics Token/),
		]);
		// The webhook carries no reference to a credential that does not exist.
		const consoleWebhook = api
			.byName('Reliability: Operator Console')
			.nodes.find((n) => n.name === 'Console')!;
		expect(consoleWebhook.credentials).toBeUndefined();
		// The weekly audit reads the workflows with Setup's own n8n API credential.
		expect(byName.get('Reliability: Weekly audit')!.needs).toEqual([
			expect.stringMatching(/n8n API credential on node "Get Many Workflows"/),
		]);
		// The Fire drill has only a Manual Trigger: a person runs it, nothing is published.
		expect(byName.get('Reliability: Fire drill')).toMatchObject({
			published: 'runs from the editor',
			needs: [],
		});
		expect(results.filter((r) => r.published === true)).toHaveLength(bundled.length - 4);
	});

	it('a second run updates the same workflows, keeping what the user set on their nodes', async () => {
		const api = new MemoryApi();
		const first = await installBundledWorkflows(api, { store, consoleLogin });
		// The user switches the Alert workflow to Slack and gives the console its sign-in.
		const alert = api.byName('Reliability: Alert');
		const slack = alert.nodes.find((n) => n.name === 'Send (Slack)')!;
		expect(slack.disabled).toBe(true);
		slack.disabled = false;
		slack.credentials = { slackApi: { id: 'cred-slack-1', name: 'Ops Slack' } };

		const second = await installBundledWorkflows(api, { store });
		expect(second.map((r) => [r.id, r.action])).toEqual(first.map((r) => [r.id, 'updated']));
		expect(api.workflows.size).toBe(bundled.length);
		const slackAfter = api
			.byName('Reliability: Alert')
			.nodes.find((n) => n.name === 'Send (Slack)')!;
		expect(slackAfter.disabled).toBe(false);
		expect(slackAfter.credentials).toEqual({ slackApi: { id: 'cred-slack-1', name: 'Ops Slack' } });
		// The console keeps the sign-in the first run set, and stays published.
		const console = second.find((r) => r.name === 'Reliability: Operator Console')!;
		expect(console.needs).toEqual([]);
		expect(console.published).toBe(true);
	});

	it('updates the workflows a CLI import made, found by their bundled IDs', async () => {
		const api = new MemoryApi();
		// `n8n import:workflow` keeps the file's ID, nodes and placeholder credentials.
		const shipped = bundled.find((w) => w.id === 'relAlertWorkflow')!;
		api.workflows.set('relAlertWorkflow', { ...structuredClone(shipped) });
		const results = await installBundledWorkflows(api, { store });
		expect(results.find((r) => r.bundledId === 'relAlertWorkflow')).toMatchObject({
			id: 'relAlertWorkflow',
			action: 'updated',
		});
		expect(executeTargets(api.byName('Reliability: Recover'))).toEqual([
			'relAlertWorkflow',
			'relAlertWorkflow',
		]);
	});

	it('stops before writing anything when two workflows carry a bundled name', async () => {
		const api = new MemoryApi();
		await api.create({ name: 'Reliability: Alert', nodes: [], connections: {}, settings: {} });
		await api.create({ name: 'Reliability: Alert', nodes: [], connections: {}, settings: {} });
		await expect(installBundledWorkflows(api, { store })).rejects.toThrow(
			/2 workflows are named "Reliability: Alert" \(IDs n8n1, n8n2\)/,
		);
		expect(api.workflows.size).toBe(2);
	});

	it('reports a workflow n8n would not publish, and one n8n 1.x runs only when called', async () => {
		const api = new MemoryApi();
		const probe = new MemoryApi();
		const ids = (await installBundledWorkflows(probe, { store, publish: false })).map((r) => r.id);
		expect(probe.activated).toEqual([]);
		// Same order, same IDs in a fresh API: refuse two of them.
		api.refuseActivation.set(ids[0], 'Workflow has no node to start the workflow');
		api.refuseActivation.set(ids[1], 'There is a conflict with one of the webhooks.');
		const results = await installBundledWorkflows(api, {
			store,
			consoleLogin,
			metricsToken,
			n8nApi,
		});
		expect(results[0]).toMatchObject({ published: 'runs when called' });
		expect(results[0].error).toBeUndefined();
		expect(results[1]).toMatchObject({
			published: false,
			error: /conflict with one of the webhooks/,
		});
	});
});

describe('Setup after an upgrade: the package, n8n and what Setup wrote before', () => {
	const files = bundledWorkflowFiles();
	const ALERT_FILE = 'alert.json';
	/** The package's next version: `change` applied to the Alert workflow's file. */
	const upgraded = (change: (workflow: WorkflowBody) => void) => {
		const alert = JSON.parse(files[ALERT_FILE]) as WorkflowBody;
		change(alert);
		return { ...files, [ALERT_FILE]: JSON.stringify(alert) };
	};
	const node = (workflow: WorkflowBody, name: string) =>
		workflow.nodes.find((n) => n.name === name)!;
	const install = async () => {
		const api = new MemoryApi();
		const records = new MemoryRecords();
		await installBundledWorkflows(api, { store, records });
		return { api, records };
	};

	it('takes the new version of a node nobody changed, and keeps the node a person changed', async () => {
		const { api, records } = await install();
		// The operator points alerts at their own sink.
		node(api.byName('Reliability: Alert'), 'Send (HTTP)').parameters!.url =
			'https://ops.example/hook';
		const next = upgraded((alert) => {
			node(alert, 'Notify').parameters!.extra = 'new in this version';
		});

		const results = await installBundledWorkflows(api, { store, records, files: next });
		const alert = api.byName('Reliability: Alert');
		expect(node(alert, 'Send (HTTP)').parameters!.url).toBe('https://ops.example/hook');
		expect(node(alert, 'Notify').parameters!.extra).toBe('new in this version');
		expect(results.find((r) => r.name === 'Reliability: Alert')).toMatchObject({
			action: 'updated',
			published: true,
			kept: ['Send (HTTP): your parameters'],
		});
		expect(results.filter((r) => r.kept.length).map((r) => r.name)).toEqual(['Reliability: Alert']);

		// A third run still knows the node is the operator's: their URL stays.
		await installBundledWorkflows(api, { store, records, files: next });
		expect(node(api.byName('Reliability: Alert'), 'Send (HTTP)').parameters!.url).toBe(
			'https://ops.example/hook',
		);
	});

	it('says so when the package changed a node the person changed too; Overwrite Changes takes the package', async () => {
		const { api, records } = await install();
		node(api.byName('Reliability: Alert'), 'Send (HTTP)').parameters!.url =
			'https://ops.example/hook';
		const next = upgraded((alert) => {
			node(alert, 'Send (HTTP)').parameters!.timeout = 5000;
		});
		const [kept] = (await installBundledWorkflows(api, { store, records, files: next }))
			.filter((r) => r.name === 'Reliability: Alert')
			.map((r) => r.kept);
		expect(kept).toEqual([
			expect.stringMatching(
				/^Send \(HTTP\): your parameters; this version of the package changes this node too/,
			),
		]);
		expect(
			node(api.byName('Reliability: Alert'), 'Send (HTTP)').parameters!.timeout,
		).toBeUndefined();

		await installBundledWorkflows(api, { store, records, files: next, overwrite: true });
		expect(node(api.byName('Reliability: Alert'), 'Send (HTTP)').parameters).toMatchObject({
			url: 'http://127.0.0.1:5680/alerts',
			timeout: 5000,
		});
	});

	it('leaves a workflow a person added nodes to as it is, and one they unpublished unpublished', async () => {
		const { api, records } = await install();
		const alert = api.byName('Reliability: Alert');
		alert.nodes.push({ name: 'Also to Teams', type: 'n8n-nodes-base.httpRequest', parameters: {} });
		const digest = api.byName('Reliability: Daily digest');
		api.active.delete(digest.id);

		const results = await installBundledWorkflows(api, { store, records });
		expect(results.find((r) => r.name === 'Reliability: Alert')).toMatchObject({
			action: 'kept',
			kept: [expect.stringMatching(/^the workflow: its nodes or connections were changed in n8n/)],
		});
		expect(api.byName('Reliability: Alert').nodes.map((n) => n.name)).toContain('Also to Teams');
		expect(results.find((r) => r.name === 'Reliability: Daily digest')).toMatchObject({
			action: 'updated',
			published: false,
			kept: ['unpublished: someone unpublished it in n8n, so Setup left it off'],
		});
		expect(api.active.has(digest.id)).toBe(false);
	});

	it('finds the workflows it made by its records, also after a person renamed them', async () => {
		const { api, records } = await install();
		const replay = api.byName('Reliability: Replay');
		replay.name = 'Replay (ours)';
		// Another workflow now carries the bundled name: the record, not the name, decides.
		await api.create({ name: 'Reliability: Replay', nodes: [], connections: {}, settings: {} });
		const results = await installBundledWorkflows(api, { store, records });
		expect(results.find((r) => r.bundledId === 'relReplayWorkflow')).toMatchObject({
			id: replay.id,
			action: 'updated',
		});
	});
});
