import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
	cpSync,
	createWriteStream,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseFlatted } from 'flatted';
import { CACHE_DIR, REPO_ROOT } from './paths';
import { freePort, waitFor } from './ports';

/**
 * The real-n8n harness: installs a pinned n8n into the cache (scripts/install-n8n.sh), installs
 * this package into a fresh user folder the way users do (npm pack, then npm install in
 * ~/.n8n/nodes), imports credentials and workflows by CLI, starts n8n headless on a free port,
 * triggers webhooks, reads executions over n8n's REST API, and stops only what it started.
 */
const run = promisify(execFile);

export interface N8nInstall {
	version: string;
	node: string;
	n8n: string;
}

export async function installN8n(version: string): Promise<N8nInstall> {
	const { stdout } = await run('bash', [join(REPO_ROOT, 'scripts', 'install-n8n.sh'), version], {
		maxBuffer: 16 * 1024 * 1024,
		env: { ...process.env, RELIABILITY_CACHE_DIR: CACHE_DIR },
	});
	const line = (key: string): string => {
		const found = stdout.split('\n').find((l) => l.startsWith(`${key}=`));
		if (!found) throw new Error(`install-n8n.sh printed no ${key}=: ${stdout}`);
		return found.slice(key.length + 1);
	};
	return { version, node: line('NODE'), n8n: line('N8N') };
}

/** Packs the built package once (npm pack of dist/ and workflows/), as a user would receive it. */
export async function packPackage(outDir = join(CACHE_DIR, 'packs')): Promise<string> {
	mkdirSync(outDir, { recursive: true });
	const { stdout } = await run(
		'npm',
		['pack', '--silent', '--ignore-scripts', '--pack-destination', outDir],
		{ cwd: REPO_ROOT },
	);
	const file = stdout.trim().split('\n').pop()!;
	return join(outDir, file);
}

/** Installs the package tarball into `<userFolder>/.n8n/nodes`, where n8n loads community nodes from. */
async function installPackageInto(userFolder: string, tarball: string): Promise<void> {
	const nodesDir = join(userFolder, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	if (!existsSync(join(nodesDir, 'package.json'))) {
		writeFileSync(
			join(nodesDir, 'package.json'),
			JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2),
		);
	}
	// n8n provides n8n-workflow itself, so the peer dependency is not installed (as n8n does).
	await run(
		'npm',
		[
			'install',
			'--no-audit',
			'--no-fund',
			'--omit=dev',
			'--legacy-peer-deps',
			'--loglevel=error',
			tarball,
		],
		{ cwd: nodesDir, maxBuffer: 16 * 1024 * 1024 },
	);
}

export interface CredentialFile {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

export interface WorkflowFile {
	id: string;
	name: string;
	nodes: unknown[];
	connections: Record<string, unknown>;
	active?: boolean;
	settings?: Record<string, unknown>;
	[key: string]: unknown;
}

export interface StartOptions {
	install: N8nInstall;
	/** Folder that gets `.n8n/`; created when missing. Default: a fresh temporary folder. */
	userFolder?: string;
	/** Port for the editor and webhooks. Default: a free one. */
	port?: number;
	tarball?: string;
	credentials?: CredentialFile[];
	workflows?: WorkflowFile[];
	/** Workflow ids to activate (publish) before start, so their triggers listen. */
	activate?: string[];
	env?: Record<string, string>;
	owner?: OwnerLogin;
	/** Where n8n's output goes; default a log file in the user folder. */
	logFile?: string;
}

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

/** A fixed key: credentials imported by CLI and read by the server must share it. */
const ENCRYPTION_KEY = 'n8n-nodes-reliability-test-key';

/** The parent's environment without what a test runner sets (n8n changes behaviour under NODE_ENV=test). */
function baseEnv(): NodeJS.ProcessEnv {
	const env = { ...process.env };
	for (const key of Object.keys(env))
		if (key.startsWith('JEST_') || key === 'NODE_ENV' || key.startsWith('npm_')) delete env[key];
	return env;
}

function n8nEnv(
	userFolder: string,
	port: number,
	brokerPort: number,
	extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
	return {
		...baseEnv(),
		NODE_ENV: 'production',
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: 'localhost',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `http://localhost:${port}/`,
		WEBHOOK_URL: `http://localhost:${port}/`,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_UNVERIFIED_PACKAGES_ENABLED: 'true',
		N8N_LOG_LEVEL: process.env.N8N_LOG_LEVEL ?? 'warn',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
		DB_TYPE: 'sqlite',
		...extra,
	};
}

export class N8nProcess {
	private cookie = '';

	constructor(
		readonly install: N8nInstall,
		readonly userFolder: string,
		readonly port: number,
		readonly brokerPort: number,
		private readonly env: NodeJS.ProcessEnv,
		readonly logFile: string,
		private child?: ChildProcess,
	) {}

	get baseUrl(): string {
		return `http://localhost:${this.port}`;
	}

	get majorVersion(): number {
		return Number(this.install.version.split('.')[0]);
	}

	/** Runs an n8n CLI command against this user folder (n8n need not be running). */
	async cli(args: string[], timeoutMs = 180_000): Promise<string> {
		try {
			const { stdout } = await run(this.install.node, [this.install.n8n, ...args], {
				env: this.env,
				timeout: timeoutMs,
				maxBuffer: 16 * 1024 * 1024,
			});
			return stdout;
		} catch (error) {
			const e = error as { stdout?: string; stderr?: string; message: string };
			throw new Error(
				`n8n ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
			);
		}
	}

	async importCredentials(credentials: CredentialFile[]): Promise<void> {
		if (credentials.length === 0) return;
		const file = join(this.userFolder, `credentials-${randomUUID()}.json`);
		writeFileSync(file, JSON.stringify(credentials));
		await this.cli(['import:credentials', `--input=${file}`]);
		rmSync(file);
	}

	async importWorkflows(workflows: WorkflowFile[]): Promise<void> {
		if (workflows.length === 0) return;
		const dir = mkdtempSync(join(this.userFolder, 'workflows-'));
		for (const workflow of workflows) {
			writeFileSync(
				join(dir, `${workflow.id}.json`),
				JSON.stringify({ settings: { executionOrder: 'v1' }, ...workflow, active: false }),
			);
		}
		await this.cli(['import:workflow', '--separate', `--input=${dir}`]);
		rmSync(dir, { recursive: true, force: true });
	}

	/** Activates workflows by CLI before start: 2.x publishes them, 1.x sets them active. */
	async activateWorkflows(ids: string[]): Promise<void> {
		for (const id of ids) {
			await this.cli(
				this.majorVersion >= 2
					? ['publish:workflow', `--id=${id}`]
					: ['update:workflow', `--id=${id}`, '--active=true'],
			);
		}
	}

	async start(timeoutMs = 180_000): Promise<void> {
		this.child = await spawnUntilReady(
			this.install,
			['start'],
			this.env,
			this.logFile,
			`n8n ${this.install.version} on port ${this.port}`,
			timeoutMs,
			async () => {
				// n8n 1.x answers /healthz, and serves a "starting up" page with status 200 on every
				// path, before its REST routes are mounted; /rest/settings answers JSON only once the
				// server is fully up.
				const response = await fetch(`${this.baseUrl}/rest/settings`).catch(() => undefined);
				if (!response?.ok) return false;
				const body = (await response.json().catch(() => undefined)) as
					{ data?: unknown } | undefined;
				return Boolean(body?.data);
			},
		);
	}

	/** Stops n8n: SIGTERM to its process group (n8n and its task runner), SIGKILL after a grace. */
	async stop(graceMs = 20_000): Promise<void> {
		await stopGroup(this.child, graceMs);
		this.child = undefined;
	}

	/** Kills n8n at once, as a crash or an OOM kill would, leaving executions unfinished. */
	async kill(): Promise<void> {
		await killGroup(this.child);
		this.child = undefined;
	}

	/**
	 * Starts an `n8n worker` for this instance (queue mode: the instance must run with
	 * EXECUTIONS_MODE=queue on Postgres). The worker gets its own user folder with a copy of the
	 * installed community packages (workers execute the nodes, so each has the package, as the
	 * README asks of every worker), its own task-runner broker port and its own worker-server
	 * port, and is ready when its readiness endpoint says database and Redis are connected.
	 */
	async startWorker(
		name: string,
		options: { env?: Record<string, string>; concurrency?: number; timeoutMs?: number } = {},
	): Promise<N8nWorker> {
		const folder = join(this.userFolder, `worker-${name}`);
		const nodesDir = join(this.userFolder, '.n8n', 'nodes');
		mkdirSync(join(folder, '.n8n'), { recursive: true });
		if (existsSync(nodesDir)) cpSync(nodesDir, join(folder, '.n8n', 'nodes'), { recursive: true });
		const healthPort = await freePort();
		const brokerPort = await freePort();
		const env: NodeJS.ProcessEnv = {
			...this.env,
			N8N_USER_FOLDER: folder,
			N8N_RUNNERS_BROKER_PORT: String(brokerPort),
			QUEUE_HEALTH_CHECK_ACTIVE: 'true',
			QUEUE_HEALTH_CHECK_PORT: String(healthPort),
			N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
			...options.env,
		};
		const worker = new N8nWorker(
			this.install,
			name,
			folder,
			healthPort,
			env,
			join(folder, 'worker.log'),
			options.concurrency ?? 10,
		);
		try {
			await worker.start(options.timeoutMs);
		} catch (error) {
			// A worker that never became ready is still a process of ours: stop it before failing.
			await worker.stop().catch(() => undefined);
			throw error;
		}
		return worker;
	}

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
		if (this.majorVersion >= 2 && current.activeVersionId)
			await this.rest('POST', `/workflows/${id}/activate`, { versionId: saved.versionId });
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

	/** One execution with its run data, decoded from n8n's flatted form. */
	async execution(id: string): Promise<Execution> {
		const raw = await this.rest<Execution & { data: string | object }>('GET', `/executions/${id}`);
		const data = typeof raw.data === 'string' ? parseFlatted(raw.data) : raw.data;
		return { ...raw, data } as Execution;
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

/** One `n8n worker` process of a queue-mode instance; started by N8nProcess.startWorker. */
export class N8nWorker {
	private child?: ChildProcess;

	constructor(
		readonly install: N8nInstall,
		readonly name: string,
		readonly userFolder: string,
		readonly healthPort: number,
		private readonly env: NodeJS.ProcessEnv,
		readonly logFile: string,
		readonly concurrency: number,
	) {}

	async start(timeoutMs = 180_000): Promise<void> {
		const label = `n8n worker ${this.name} (${this.install.version}, health port ${this.healthPort})`;
		this.child = await spawnUntilReady(
			this.install,
			['worker', `--concurrency=${this.concurrency}`],
			this.env,
			this.logFile,
			label,
			timeoutMs,
			async () => {
				// /healthz answers as soon as the worker server listens; /healthz/readiness once
				// the worker's database and Redis connections are up, so jobs can be taken.
				const response = await fetch(`http://127.0.0.1:${this.healthPort}/healthz/readiness`).catch(
					() => undefined,
				);
				return Boolean(response?.ok);
			},
		);
	}

	/** SIGTERM to the worker's process group (worker and task runner), SIGKILL after a grace. */
	async stop(graceMs = 20_000): Promise<void> {
		await stopGroup(this.child, graceMs);
		this.child = undefined;
	}

	async kill(): Promise<void> {
		await killGroup(this.child);
		this.child = undefined;
	}
}

/**
 * Spawns an n8n command in a process group of its own (so stop and kill reach its task runner
 * too), its output appended to `logFile`, and waits until `ready` says so; fails early, naming
 * the log, when the process exits first, and kills it when it is not ready in time.
 */
async function spawnUntilReady(
	install: N8nInstall,
	args: string[],
	env: NodeJS.ProcessEnv,
	logFile: string,
	label: string,
	timeoutMs: number,
	ready: () => Promise<boolean>,
): Promise<ChildProcess> {
	const log = createWriteStream(logFile, { flags: 'a' });
	const child = spawn(install.node, [install.n8n, ...args], {
		env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	child.stdout?.pipe(log);
	child.stderr?.pipe(log);
	let exited: string | undefined;
	child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
	const exitError = () => new Error(`${label} ${exited} before it was ready; see ${logFile}`);
	await waitFor(
		`${label} (log: ${logFile})`,
		async () => {
			if (exited) throw exitError();
			return (await ready()) ? true : undefined;
		},
		timeoutMs,
		500,
	).catch(async (error: Error) => {
		if (exited) throw exitError();
		// Not ready in time: the process is ours and nobody else holds it, so stop it here.
		await killGroup(child).catch(() => undefined);
		throw error;
	});
	return child;
}

/** SIGTERM to a detached child's process group, SIGKILL when it has not exited after `graceMs`. */
async function stopGroup(child: ChildProcess | undefined, graceMs: number): Promise<void> {
	if (!child || child.exitCode !== null || child.signalCode !== null) return;
	const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	try {
		process.kill(-child.pid!, 'SIGTERM');
	} catch {
		return;
	}
	const timer = setTimeout(() => {
		try {
			process.kill(-child.pid!, 'SIGKILL');
		} catch {
			/* already gone */
		}
	}, graceMs);
	await done;
	clearTimeout(timer);
}

/** SIGKILL to a detached child's process group, at once. */
async function killGroup(child: ChildProcess | undefined): Promise<void> {
	if (!child || child.exitCode !== null || child.signalCode !== null) return;
	const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	try {
		process.kill(-child.pid!, 'SIGKILL');
	} catch {
		return;
	}
	await done;
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
					executionTime: number;
					error?: { message: string; description?: string };
					data?: { main: Array<Array<{ json: Record<string, unknown> }> | null> };
				}>
			>;
		};
	};
}

/** The items a node sent to each of its outputs in its first run. */
export function nodeOutputs(
	execution: Execution,
	nodeName: string,
): Array<Array<Record<string, unknown>>> {
	const runs = execution.data.resultData.runData[nodeName];
	if (!runs?.length) throw new Error(`Node "${nodeName}" did not run in execution ${execution.id}`);
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

/**
 * Prepares a user folder (package installed, credentials and workflows imported, workflows
 * activated), starts n8n and signs in as the owner.
 */
export async function startN8n(options: StartOptions): Promise<N8nProcess> {
	const userFolder =
		options.userFolder ?? mkdtempSync(join(CACHE_DIR, `run-${options.install.version}-`));
	mkdirSync(userFolder, { recursive: true });
	const port = options.port ?? (await freePort());
	const brokerPort = await freePort();
	const env = n8nEnv(userFolder, port, brokerPort, options.env);
	const instance = new N8nProcess(
		options.install,
		userFolder,
		port,
		brokerPort,
		env,
		options.logFile ?? join(userFolder, 'n8n.log'),
	);
	if (options.tarball) await installPackageInto(userFolder, options.tarball);
	await instance.importCredentials(options.credentials ?? []);
	await instance.importWorkflows(options.workflows ?? []);
	await instance.activateWorkflows(options.activate ?? []);
	try {
		await instance.start();
		await instance.setupOwner(options.owner);
	} catch (error) {
		// The caller gets no instance to stop, so an n8n that started but failed here is stopped now.
		await instance.stop().catch(() => undefined);
		throw error;
	}
	return instance;
}

/** Removes user folders of earlier runs that were left behind (a killed test run). */
export function cleanOldRuns(maxAgeMs = 6 * 60 * 60_000): void {
	if (!existsSync(CACHE_DIR)) return;
	for (const entry of readdirSync(CACHE_DIR)) {
		if (!entry.startsWith('run-')) continue;
		const path = join(CACHE_DIR, entry);
		if (Date.now() - statSync(path).mtimeMs > maxAgeMs)
			rmSync(path, { recursive: true, force: true });
	}
}

/** Where queue mode's Redis is, and the key prefix that keeps one run's queue and cache apart from others on the same server. */
export interface QueueRedis {
	host: string;
	port: number;
	prefix: string;
}

/**
 * The environment of a queue-mode instance: executions go through Bull on Redis (under this
 * run's prefix) to `n8n worker` processes, and n8n keeps its own data in Postgres, which queue
 * mode needs so that main and workers share executions, workflows and credentials.
 */
export function queueModeEnv(
	database: { host: string; port: number; database: string; user: string; password: string },
	redis: QueueRedis,
): Record<string, string> {
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.host,
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		QUEUE_BULL_PREFIX: redis.prefix,
		// n8n's cache (Redis in queue mode) and, on 2.x, its pub/sub channels live under this
		// prefix; the default "n8n" would mix runs that share the Redis server.
		N8N_REDIS_KEY_PREFIX: redis.prefix,
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: database.host,
		DB_POSTGRESDB_PORT: String(database.port),
		DB_POSTGRESDB_DATABASE: database.database,
		DB_POSTGRESDB_USER: database.user,
		DB_POSTGRESDB_PASSWORD: database.password,
		// n8n's default pool of 2 connections queues its own health ping behind a burst of webhook
		// executions; after 5 s the ping counts as failed and the main answers every request with
		// 503 "Database is not ready!" until the next ping.
		DB_POSTGRESDB_POOL_SIZE: '10',
	};
}

/**
 * Deletes a run's keys (`<prefix>*`: queue and cache) from Redis with one EVAL over a bare RESP socket, so
 * the suite needs no Redis client. Returns how many keys were deleted.
 */
export async function deleteRedisKeys(redis: QueueRedis): Promise<number> {
	const script =
		"local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) n = n + 1 end return n";
	const args = ['EVAL', script, '0', `${redis.prefix}*`];
	const command = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
	return await new Promise<number>((resolve, reject) => {
		const socket = createConnection({ host: redis.host, port: redis.port });
		let reply = '';
		socket.setTimeout(10_000, () => socket.destroy(new Error('Redis did not answer within 10 s')));
		socket.on('error', reject);
		socket.on('connect', () => socket.write(command));
		socket.on('data', (chunk) => {
			reply += chunk.toString('utf8');
			if (!reply.endsWith('\r\n')) return;
			socket.end();
			if (reply.startsWith(':')) resolve(Number(reply.slice(1).trim()));
			else reject(new Error(`Redis answered ${reply.trim()}`));
		});
	});
}
