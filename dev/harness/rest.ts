import { randomUUID } from 'node:crypto';
import { parse as parseFlatted } from 'flatted';
import { waitFor } from './ports';

/** The owner account the harness creates and signs in with. */
export interface OwnerLogin {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export const DEFAULT_OWNER: OwnerLogin = {
	email: 'owner@reliability.test',
	password: 'Reliability-Owner-1',
	firstName: 'Reliability',
	lastName: 'Owner',
};

/**
 * n8n over HTTP, as the editor and senders use it: the owner's sign-in (session cookie), n8n's
 * internal REST API (node and credential types, credential tests, workflows, executions with
 * their run data) and production webhooks.
 */
export class N8nRestClient {
	private cookie = '';

	constructor(
		readonly baseUrl: string,
		/** n8n's major version: 2.x publishes workflow versions where 1.x activates on save. */
		private readonly majorVersion: number,
	) {}

	/** Creates the owner on a fresh instance (or logs in when it exists) and keeps the session cookie. */
	async setupOwner(owner: OwnerLogin = DEFAULT_OWNER): Promise<void> {
		const setup = await fetch(`${this.baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(owner),
		});
		if (setup.ok) {
			this.cookie = cookieOf(setup);
			return;
		}
		const why = `${setup.status} ${await setup.text()}`;
		await this.login(owner).catch((error: Error) => {
			throw new Error(`owner setup answered ${why.slice(0, 300)}; then ${error.message}`);
		});
	}

	async login(owner: OwnerLogin = DEFAULT_OWNER): Promise<void> {
		const response = await fetch(`${this.baseUrl}/rest/login`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({
				email: owner.email,
				emailOrLdapLoginId: owner.email,
				password: owner.password,
			}),
		});
		if (!response.ok)
			throw new Error(`n8n login failed: ${response.status} ${await response.text()}`);
		this.cookie = cookieOf(response);
	}

	/** Calls n8n's internal REST API as the owner; returns the `data` of the answer. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		const response = await fetch(`${this.baseUrl}/rest${path}`, {
			method,
			headers: {
				'content-type': 'application/json',
				cookie: this.cookie,
				'browser-id': 'reliability-tests',
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok)
			throw new Error(`n8n ${method} /rest${path}: ${response.status} ${text.slice(0, 500)}`);
		const parsed = text ? (JSON.parse(text) as { data?: T }) : {};
		return (parsed.data ?? parsed) as T;
	}

	/** Every node type the editor gets, as n8n describes it (version, outputs, codex and the rest). */
	async nodeTypes(): Promise<NodeTypeDescription[]> {
		const response = await fetch(`${this.baseUrl}/types/nodes.json`, {
			headers: { cookie: this.cookie },
		});
		return (await response.json()) as NodeTypeDescription[];
	}

	async nodeTypeNames(): Promise<string[]> {
		return (await this.nodeTypes()).map((t) => t.name);
	}

	async credentialTypeNames(): Promise<string[]> {
		const response = await fetch(`${this.baseUrl}/types/credentials.json`, {
			headers: { cookie: this.cookie },
		});
		const types = (await response.json()) as Array<{ name: string }>;
		return types.map((t) => t.name);
	}

	/** Presses a credential's test button: saves the credential, then tests it, as the editor does. */
	async testCredential(
		type: string,
		data: Record<string, unknown>,
	): Promise<{ status: string; message: string }> {
		const created = await this.rest<{ id: string }>('POST', '/credentials', {
			name: `test ${randomUUID()}`,
			type,
			data,
		});
		try {
			return await this.rest<{ status: string; message: string }>('POST', '/credentials/test', {
				credentials: { id: created.id, name: 'test', type, data },
			});
		} finally {
			await this.rest('DELETE', `/credentials/${created.id}`).catch(() => undefined);
		}
	}

	/**
	 * POSTs to a production webhook; returns the status and the parsed body. n8n starts serving
	 * before it has registered the webhooks of active workflows, so a "not registered" 404 is
	 * retried for a while, as a sender's retry would.
	 */
	async webhook(
		path: string,
		body: unknown,
		headers: Record<string, string> = {},
		registrationWaitMs = 60_000,
	): Promise<{ status: number; body: unknown }> {
		const deadline = Date.now() + registrationWaitMs;
		for (;;) {
			const response = await fetch(`${this.baseUrl}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', ...headers },
				body: JSON.stringify(body),
			});
			const text = await response.text();
			let parsed: unknown = text;
			try {
				parsed = JSON.parse(text);
			} catch {
				/* not JSON */
			}
			if (response.status === 404 && /not registered/.test(text) && Date.now() < deadline) {
				await new Promise((r) => setTimeout(r, 500));
				continue;
			}
			return { status: response.status, body: parsed };
		}
	}

	/**
	 * Saves a workflow under the ID it brings, unpublished, as an import does (2.x keeps a given
	 * ID; 1.x drops it, so 1.x callers import by CLI). Tags are left out: they are names to
	 * the import and tag IDs to the API.
	 */
	async createWorkflow(workflow: {
		id: string;
		name: string;
		nodes: unknown[];
		connections: Record<string, unknown>;
		settings?: Record<string, unknown>;
		[key: string]: unknown;
	}): Promise<void> {
		if (this.majorVersion < 2)
			throw new Error(`n8n 1.x gives a created workflow a new ID: import ${workflow.id} by CLI`);
		const { id, name, nodes, connections, settings, pinData, meta } = workflow;
		await this.rest('POST', '/workflows', {
			id,
			name,
			nodes,
			connections,
			settings: { executionOrder: 'v1', ...settings },
			...(pinData ? { pinData } : {}),
			...(meta ? { meta } : {}),
		});
	}

	/** Replaces a saved credential's name and data, keeping its ID, as the editor's Save does. */
	async updateCredential(credential: {
		id: string;
		name: string;
		type: string;
		data: Record<string, unknown>;
	}): Promise<void> {
		await this.rest('PATCH', `/credentials/${credential.id}`, {
			name: credential.name,
			type: credential.type,
			data: credential.data,
		});
	}

	/**
	 * Activates (2.x: publishes) a saved workflow, as the editor's toggle does. n8n 1.x refuses a
	 * workflow that only runs when called (an Error Trigger or Execute Workflow Trigger alone) with
	 * "has no node to start the workflow"; 1.x runs such a workflow without activation, so that
	 * answer is no failure there. 2.x runs only published sub-workflows and publishes them.
	 */
	async activateWorkflow(id: string): Promise<void> {
		const saved = await this.rest<{ versionId: string }>('GET', `/workflows/${id}`);
		try {
			await this.rest('POST', `/workflows/${id}/activate`, { versionId: saved.versionId });
		} catch (error) {
			if (this.majorVersion < 2 && /has no node to start the workflow/.test(String(error))) return;
			throw error;
		}
	}

	/**
	 * Edits a saved workflow as a user does in the editor: saves it, and on 2.x publishes the new
	 * version when the workflow was published (1.x re-activates an active workflow on save).
	 */
	async updateWorkflow(
		id: string,
		change: (workflow: { nodes: Array<Record<string, unknown>>; connections: unknown }) => void,
	): Promise<void> {
		const current = await this.rest<
			Record<string, unknown> & {
				nodes: Array<Record<string, unknown>>;
				connections: unknown;
				versionId: string;
				activeVersionId?: string | null;
				active?: boolean;
			}
		>('GET', `/workflows/${id}`);
		change(current);
		const saved = await this.rest<{ versionId: string }>('PATCH', `/workflows/${id}`, {
			name: current.name,
			nodes: current.nodes,
			connections: current.connections,
			settings: current.settings,
			versionId: current.versionId,
			...(this.majorVersion < 2 ? { active: current.active } : {}),
		});
		if (this.majorVersion >= 2 && current.activeVersionId) {
			await this.rest('POST', `/workflows/${id}/activate`, { versionId: saved.versionId });
			// n8n 2.x runs sub-workflows from the published version: once (CI, n8n 2.40.7) a
			// Replay run right after this call still ran the old nodes. Wait until n8n reports the
			// saved version as published, with the nodes sent.
			const sent = JSON.stringify(current.nodes.map((n) => n.parameters));
			const deadline = Date.now() + 30_000;
			for (;;) {
				const now = await this.rest<{
					activeVersionId?: string | null;
					activeVersion?: { nodes?: Array<Record<string, unknown>> } | null;
				}>('GET', `/workflows/${id}`);
				const nodes = now.activeVersion?.nodes;
				const published =
					now.activeVersionId === saved.versionId &&
					(!nodes || JSON.stringify(nodes.map((n) => n.parameters)) === sent);
				if (published) break;
				if (Date.now() > deadline)
					throw new Error(
						`workflow ${id}: version ${saved.versionId} not published after 30 s (active: ${now.activeVersionId ?? 'none'})`,
					);
				await new Promise((resolve) => setTimeout(resolve, 250));
			}
		}
	}

	/** Executions of a workflow, newest first (summaries). */
	async executions(workflowId: string): Promise<ExecutionSummary[]> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const data = await this.rest<{ results: ExecutionSummary[] }>(
			'GET',
			`/executions?filter=${filter}&limit=250`,
		);
		return data.results;
	}

	/**
	 * One execution with its run data, decoded from n8n's flatted form. An execution that ended
	 * in success or error but has run no node and holds no error is read again, for 2 s after
	 * that first read, and each such read is reported on stderr. n8n 1.x on SQLite with its
	 * default single connection saves an ending execution's status and its run data in two
	 * statements outside a transaction, so such a read may land between them. That is one
	 * possible cause of a CI failure seen once on n8n 1.123.81 ("Create Contact did not run in
	 * execution 1"); it was not reproduced, and the report tells the next failure whether a read
	 * came too early.
	 */
	async execution(id: string): Promise<Execution> {
		const read = async (): Promise<Execution> => {
			const raw = await this.rest<Execution & { data: string | object }>(
				'GET',
				`/executions/${id}`,
			);
			const data = typeof raw.data === 'string' ? parseFlatted(raw.data) : raw.data;
			return { ...raw, data } as Execution;
		};
		let execution = await read();
		if (hasFinalRunData(execution)) return execution;
		const deadline = Date.now() + 2_000;
		let reads = 1;
		let final = false;
		while (!final && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			execution = await read();
			reads += 1;
			final = hasFinalRunData(execution);
		}
		process.stderr.write(
			`[harness] n8n ${this.baseUrl} execution ${id} (${execution.status}) read with no node run and no error; after ${reads} reads ${final ? 'its run data was there' : 'it still had none'}\n`,
		);
		return execution;
	}

	/** Waits until a workflow has `count` finished executions; returns them, oldest first, with run data. */
	async waitForExecutions(
		workflowId: string,
		count: number,
		timeoutMs = 60_000,
	): Promise<Execution[]> {
		const summaries = await waitFor(
			`${count} finished executions of workflow ${workflowId}`,
			async () => {
				const list = await this.executions(workflowId);
				const finished = list.filter((e) => !['running', 'new', 'waiting'].includes(e.status));
				return finished.length >= count ? finished : undefined;
			},
			timeoutMs,
			300,
		);
		const sorted = summaries.sort((a, b) => Number(a.id) - Number(b.id));
		return await Promise.all(sorted.map((e) => this.execution(e.id)));
	}
}

/** The parts of a node type's description the tests read. */
export interface NodeTypeDescription {
	name: string;
	version: number | number[];
	usableAsTool?: unknown;
	outputs?: unknown;
	outputNames?: string[];
	codex?: {
		categories?: string[];
		resources?: { primaryDocumentation?: Array<{ url: string }> };
	};
}

export interface ExecutionSummary {
	id: string;
	status: string;
	workflowId: string;
	startedAt: string;
	stoppedAt?: string;
}

export interface Execution extends ExecutionSummary {
	data: {
		resultData: {
			error?: { message: string; description?: string };
			lastNodeExecuted?: string;
			runData: Record<
				string,
				Array<{
					startTime: number;
					executionTime: number;
					error?: { message: string; description?: string };
					data?: { main: Array<Array<{ json: Record<string, unknown> }> | null> };
				}>
			>;
		};
	};
}

/**
 * Whether an execution's run data can be the one n8n writes when it ends: an execution that
 * ended in success or error has run a node or holds the error that stopped it. One in another
 * status (running, waiting, canceled, crashed) is taken as it is read: n8n may mark a crashed or
 * canceled execution without writing its run data, so none is no sign of an early read.
 */
function hasFinalRunData(execution: Execution): boolean {
	if (execution.status !== 'success' && execution.status !== 'error') return true;
	const result = execution.data?.resultData;
	return Boolean(Object.keys(result?.runData ?? {}).length || result?.error);
}

/** The items a node sent to each of its outputs in its first run. */
export function nodeOutputs(
	execution: Execution,
	nodeName: string,
): Array<Array<Record<string, unknown>>> {
	const result = execution.data.resultData;
	const runs = result.runData[nodeName];
	if (!runs?.length)
		throw new Error(
			`Node "${nodeName}" did not run in execution ${execution.id} (${execution.status}; nodes run: ${Object.keys(result.runData).join(', ') || 'none'}; last: ${result.lastNodeExecuted ?? 'none'}; error: ${result.error?.message ?? 'none'})`,
		);
	return (runs[0].data?.main ?? []).map((items) => (items ?? []).map((item) => item.json));
}

function cookieOf(response: Response): string {
	const header = response.headers.get('set-cookie') ?? '';
	const match = /n8n-auth=[^;]+/.exec(header);
	if (!match)
		throw new Error(
			`n8n did not set an auth cookie (${response.status}, set-cookie: ${header || 'none'})`,
		);
	return match[0];
}
