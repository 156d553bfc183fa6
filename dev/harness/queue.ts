import { createConnection } from 'node:net';
import type { N8nInstall } from './install';
import { ManagedProcess } from './process';

/**
 * Queue mode: n8n's executions go through Bull on Redis to `n8n worker` processes, and n8n keeps
 * its own data in Postgres. The environment of such an instance, its workers (started by
 * N8nProcess.startWorker), and the cleanup of a run's Redis keys.
 */

/** One `n8n worker` process of a queue-mode instance; started by N8nProcess.startWorker. */
export class N8nWorker extends ManagedProcess {
	constructor(
		install: N8nInstall,
		readonly name: string,
		readonly userFolder: string,
		readonly healthPort: number,
		env: NodeJS.ProcessEnv,
		logFile: string,
		readonly concurrency: number,
	) {
		super(install, env, logFile);
	}

	protected get label(): string {
		return `n8n worker ${this.name} (${this.install.version}, health port ${this.healthPort})`;
	}

	protected get args(): string[] {
		return ['worker', `--concurrency=${this.concurrency}`];
	}

	protected async ready(): Promise<boolean> {
		// /healthz answers as soon as the worker server listens; /healthz/readiness once the
		// worker's database and Redis connections are up, so jobs can be taken.
		const response = await fetch(`http://127.0.0.1:${this.healthPort}/healthz/readiness`).catch(
			() => undefined,
		);
		return Boolean(response?.ok);
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
