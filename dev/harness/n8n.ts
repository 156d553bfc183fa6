import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
	appendFileSync,
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installPackageInto, type N8nInstall } from './install';
import { CACHE_DIR } from './paths';
import { freePort } from './ports';
import { ManagedProcess } from './process';
import { N8nWorker } from './queue';
import { N8nRestClient, type OwnerLogin } from './rest';

/**
 * A real n8n for the tests, `npm start`, the benchmarks and the campaign: a user folder with this
 * package installed the way users do, credentials and workflows imported by CLI, n8n started
 * headless on a free port and signed in as the owner; queue-mode workers beside it. Only what
 * was started here is ever stopped.
 */
const run = promisify(execFile);

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
	/**
	 * A user folder made by prepareTemplate for this install and tarball: copied into a new user
	 * folder instead of installing the tarball and migrating n8n's database once more.
	 */
	template?: string;
	credentials?: CredentialFile[];
	workflows?: WorkflowFile[];
	/**
	 * Workflow ids to activate (publish) once n8n is up, in this order (2.x publishes a caller
	 * only after its callees), so their triggers listen when startN8n returns.
	 */
	activate?: string[];
	env?: Record<string, string>;
	owner?: OwnerLogin;
	/** Where n8n's output goes; default a log file in the user folder. */
	logFile?: string;
	/**
	 * `rest`: on 2.x, create the workflows through the REST API once n8n is up (2.x keeps the IDs
	 * it is given; 1.x drops them, so 1.x imports by CLI either way), sparing the CLI's boot of
	 * n8n. Default `cli`, as a user imports a workflow file.
	 */
	importBy?: 'cli' | 'rest';
}

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

export class N8nProcess extends ManagedProcess {
	/** n8n's REST API and webhooks, signed in as the owner once the instance has started. */
	readonly api: N8nRestClient;

	constructor(
		install: N8nInstall,
		readonly userFolder: string,
		readonly port: number,
		readonly brokerPort: number,
		env: NodeJS.ProcessEnv,
		logFile: string,
	) {
		super(install, env, logFile);
		this.api = new N8nRestClient(this.baseUrl, this.majorVersion);
	}

	get baseUrl(): string {
		return `http://localhost:${this.port}`;
	}

	get majorVersion(): number {
		return Number(this.install.version.split('.')[0]);
	}

	protected get label(): string {
		return `n8n ${this.install.version} on port ${this.port}`;
	}

	protected get args(): string[] {
		return ['start'];
	}

	protected async ready(): Promise<boolean> {
		// n8n 1.x answers /healthz, and serves a "starting up" page with status 200 on every path,
		// before its REST routes are mounted; /rest/settings answers JSON only once the server is
		// fully up.
		const response = await fetch(`${this.baseUrl}/rest/settings`).catch(() => undefined);
		if (!response?.ok) return false;
		const body = (await response.json().catch(() => undefined)) as { data?: unknown } | undefined;
		return Boolean(body?.data);
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

	/**
	 * Activates workflows by CLI while n8n is stopped (one n8n boot each: startN8n uses the REST
	 * API instead): 2.x publishes them, 1.x sets them active.
	 */
	async activateWorkflows(ids: string[]): Promise<void> {
		for (const id of ids) {
			await this.cli(
				this.majorVersion >= 2
					? ['publish:workflow', `--id=${id}`]
					: ['update:workflow', `--id=${id}`, '--active=true'],
			);
		}
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
}

/**
 * Activates workflows through the REST API. n8n 2.x refuses to publish a workflow that calls
 * one not yet published; the CLI did not check, so callers list workflows in any order. A
 * workflow refused for that is tried again after the others, until a round publishes nothing.
 */
async function activateInOrder(instance: N8nProcess, ids: string[]): Promise<void> {
	let pending = [...ids];
	while (pending.length > 0) {
		const refused: Array<{ id: string; error: unknown }> = [];
		for (const id of pending) {
			try {
				await instance.api.activateWorkflow(id);
			} catch (error) {
				if (!/which is not published/.test(String(error))) throw error;
				refused.push({ id, error });
			}
		}
		if (refused.length === pending.length) throw refused[0].error;
		pending = refused.map((r) => r.id);
	}
}

/** The IDs of the credentials a template's database holds, in the template folder. */
const SEEDED = 'seeded-credentials.json';

function seededCredentials(template: string | undefined): Set<string> {
	if (!template || !existsSync(join(template, SEEDED))) return new Set();
	return new Set(JSON.parse(readFileSync(join(template, SEEDED), 'utf8')) as string[]);
}

/**
 * A user folder with the package installed and n8n's SQLite database created and migrated, for
 * startN8n to copy: every end-to-end start would otherwise install the tarball again and run
 * n8n's migrations in its first CLI call (seconds of CPU each, on every start of every file).
 */
export async function prepareTemplate(
	install: N8nInstall,
	tarball: string,
	seed: CredentialFile[] = [],
): Promise<string> {
	const folder = mkdtempSync(join(CACHE_DIR, `run-template-${install.version}-`));
	await installPackageInto(folder, tarball);
	const probe = new N8nProcess(
		install,
		folder,
		0,
		0,
		n8nEnv(folder, 0, 0),
		join(folder, 'n8n.log'),
	);
	// Importing the seed opens the database, which creates and migrates it. The seed's credentials
	// keep their IDs; a start that brings a credential of the same ID updates it through the REST
	// API instead of a CLI import (one boot of n8n fewer).
	const file = join(folder, 'seed-credentials.json');
	writeFileSync(file, JSON.stringify(seed));
	await probe.cli(['import:credentials', `--input=${file}`]);
	rmSync(file);
	if (!existsSync(join(folder, '.n8n', 'database.sqlite')))
		throw new Error(`n8n ${install.version} made no database in ${folder}`);
	writeFileSync(join(folder, SEEDED), JSON.stringify(seed.map((c) => c.id)));
	return folder;
}

/**
 * Where an end-to-end start spends its time, appended as one JSON line to the file that
 * RELIABILITY_START_LOG names (`.ci/run` sets it and prints the sums), so the share of the suite
 * that goes into starting n8n shows in every CI log.
 */
class StartPhases {
	private readonly ms: Record<string, number> = {};
	private last = Date.now();

	constructor(private readonly version: string) {}

	lap(phase: string): void {
		const now = Date.now();
		this.ms[phase] = now - this.last;
		this.last = now;
	}

	record(): void {
		recordStartLog({ version: this.version, ...this.ms });
	}
}

/** Appends one entry (a start's phases, a stop's time) to RELIABILITY_START_LOG, when it is set. */
export function recordStartLog(entry: Record<string, string | number>): void {
	const file = process.env.RELIABILITY_START_LOG;
	if (file) appendFileSync(file, `${JSON.stringify(entry)}\n`);
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
	const phases = new StartPhases(options.install.version);
	let seeded = new Set<string>();
	if (options.template && !existsSync(join(userFolder, '.n8n'))) {
		cpSync(join(options.template, '.n8n'), join(userFolder, '.n8n'), { recursive: true });
		// The seed is in the template's SQLite database: an n8n on another database (queue mode's
		// Postgres) has none of it.
		const ownDatabase = (options.env?.DB_TYPE ?? 'sqlite') !== 'sqlite';
		if (!ownDatabase) seeded = seededCredentials(options.template);
	} else if (options.tarball) await installPackageInto(userFolder, options.tarball);
	phases.lap('folder');
	const credentials = options.credentials ?? [];
	const workflows = options.workflows ?? [];
	const workflowsByRest = options.importBy === 'rest' && instance.majorVersion >= 2;
	await instance.importCredentials(credentials.filter((c) => !seeded.has(c.id)));
	if (!workflowsByRest) await instance.importWorkflows(workflows);
	phases.lap('imports');
	try {
		await instance.start();
		phases.lap('boot');
		await instance.api.setupOwner(options.owner);
		for (const credential of credentials.filter((c) => seeded.has(c.id)))
			await instance.api.updateCredential(credential);
		if (workflowsByRest)
			for (const workflow of workflows) await instance.api.createWorkflow(workflow);
		phases.lap('rest imports');
		// Through the REST API, as the editor's toggle does: one CLI call per workflow boots n8n
		// each time (4 s of CPU idle, 20 s and more beside other tests).
		await activateInOrder(instance, options.activate ?? []);
		phases.lap('activation');
		phases.record();
	} catch (error) {
		// The caller gets no instance to stop, so an n8n that started but failed here is stopped now.
		await instance.stop().catch(() => undefined);
		throw error;
	}
	return instance;
}
