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

/** A Redis reply, as RESP gives it: a number, a text (null when absent), or a list of those. */
type RedisReply = number | string | null | RedisReply[];

/**
 * Runs a Lua script on Redis (EVAL, no keys) over a bare RESP socket, so the harness needs no
 * Redis client, and returns its reply.
 */
async function redisEval(redis: QueueRedis, script: string, args: string[]): Promise<RedisReply> {
	const parts = ['EVAL', script, '0', ...args];
	const command = `*${parts.length}\r\n${parts.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
	return await new Promise<RedisReply>((resolve, reject) => {
		const socket = createConnection({ host: redis.host, port: redis.port });
		let reply = Buffer.alloc(0);
		socket.setTimeout(10_000, () => socket.destroy(new Error('Redis did not answer within 10 s')));
		socket.on('error', reject);
		socket.on('connect', () => socket.write(command));
		socket.on('data', (chunk) => {
			reply = Buffer.concat([reply, chunk]);
			const parsed = parseReply(reply, 0);
			if (!parsed) return; // more to come
			socket.end();
			if (parsed.error) reject(new Error(`Redis answered ${parsed.error}`));
			else resolve(parsed.value);
		});
	});
}

/** One RESP value from `at`, or undefined when the buffer does not hold all of it yet. */
function parseReply(
	buffer: Buffer,
	at: number,
): { value: RedisReply; next: number; error?: string } | undefined {
	const end = buffer.indexOf('\r\n', at);
	if (end < 0) return undefined;
	const kind = String.fromCharCode(buffer[at]);
	const line = buffer.toString('utf8', at + 1, end);
	if (kind === '-') return { value: null, next: end + 2, error: line };
	if (kind === ':') return { value: Number(line), next: end + 2 };
	if (kind === '+') return { value: line, next: end + 2 };
	if (kind === '$') {
		const length = Number(line);
		if (length < 0) return { value: null, next: end + 2 };
		if (buffer.length < end + 2 + length + 2) return undefined;
		return {
			value: buffer.toString('utf8', end + 2, end + 2 + length),
			next: end + 2 + length + 2,
		};
	}
	if (kind === '*') {
		const count = Number(line);
		const values: RedisReply[] = [];
		let next = end + 2;
		for (let k = 0; k < count; k++) {
			const item = parseReply(buffer, next);
			if (!item) return undefined;
			if (item.error) return item;
			values.push(item.value);
			next = item.next;
		}
		return { value: count < 0 ? null : values, next };
	}
	return { value: null, next: end + 2, error: `an unknown reply: ${line}` };
}

/** Deletes a run's keys (`<prefix>*`: queue and cache) from Redis. Returns how many keys were deleted. */
export async function deleteRedisKeys(redis: QueueRedis): Promise<number> {
	const script =
		"local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) n = n + 1 end return n";
	const reply = await redisEval(redis, script, [`${redis.prefix}*`]);
	if (typeof reply !== 'number') throw new Error(`Redis answered ${JSON.stringify(reply)}`);
	return reply;
}

/**
 * The executions n8n's Bull queue still holds (its jobs waiting, delayed or being run by a
 * worker), read from the queue's lists under the run's prefix. An execution n8n's database says
 * is new or running and that none of these names was lost with a killed worker.
 */
export async function queuedExecutionIds(redis: QueueRedis): Promise<Set<string>> {
	const script = `local out = {}
for _, list in ipairs({'active', 'wait', 'paused'}) do
  for _, id in ipairs(redis.call('LRANGE', ARGV[1] .. ':jobs:' .. list, 0, -1)) do
    table.insert(out, redis.call('HGET', ARGV[1] .. ':jobs:' .. id, 'data') or '')
  end
end
for _, id in ipairs(redis.call('ZRANGE', ARGV[1] .. ':jobs:delayed', 0, -1)) do
  table.insert(out, redis.call('HGET', ARGV[1] .. ':jobs:' .. id, 'data') or '')
end
return out`;
	const reply = await redisEval(redis, script, [redis.prefix]);
	const ids = new Set<string>();
	for (const data of Array.isArray(reply) ? reply : []) {
		if (typeof data !== 'string' || !data) continue;
		try {
			const id = (JSON.parse(data) as { executionId?: unknown }).executionId;
			if (id !== undefined && id !== null) ids.add(String(id));
		} catch {
			// a job whose data is not JSON names no execution
		}
	}
	return ids;
}
