import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PgSettings } from '../../dev/harness/postgres';
import { sleep } from './sleep';

/**
 * Debian's PgBouncer in transaction mode in front of the test server, on a free port with its
 * files in a temp dir; the pooler the store must work behind (Supabase's and Neon's are the same
 * mode). PGBOUNCER_PATH points at another binary.
 */
export interface RunningPgBouncer {
	settings: PgSettings;
	stop: () => Promise<void>;
}

export async function startPgBouncer(
	upstream: PgSettings,
	options: { poolSize: number },
): Promise<RunningPgBouncer> {
	const binary = process.env.PGBOUNCER_PATH ?? 'pgbouncer';
	if (spawnSync(binary, ['--version']).error)
		throw new Error(
			`${binary} is not installed: the pooler tests need Debian's PgBouncer (apt-get install pgbouncer, or set PGBOUNCER_PATH)`,
		);
	const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
	chmodSync(dir, 0o777);
	const port = await freePort();
	const user = upstream.user.replace(/"/g, '""');
	writeFileSync(
		join(dir, 'userlist.txt'),
		`"${user}" "${upstream.password.replace(/"/g, '""')}"\n`,
	);
	writeFileSync(
		join(dir, 'pgbouncer.ini'),
		[
			'[databases]',
			`* = host=${upstream.host} port=${upstream.port}`,
			'[pgbouncer]',
			'listen_addr = 127.0.0.1',
			`listen_port = ${port}`,
			'unix_socket_dir =',
			'auth_type = trust',
			`auth_file = ${join(dir, 'userlist.txt')}`,
			'pool_mode = transaction',
			`default_pool_size = ${options.poolSize}`,
			'max_client_conn = 500',
			'ignore_startup_parameters = extra_float_digits,options',
			`logfile = ${join(dir, 'pgbouncer.log')}`,
			'',
		].join('\n'),
	);
	// PgBouncer refuses to run as root; -u drops to the postgres user there.
	const args = process.getuid?.() === 0 ? ['-u', 'postgres'] : [];
	const child: ChildProcess = spawn(binary, [...args, join(dir, 'pgbouncer.ini')], {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	try {
		await waitForPort(port, child, () => output);
	} catch (error) {
		child.kill('SIGKILL');
		rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	return {
		settings: { ...upstream, host: '127.0.0.1', port },
		stop: async () => {
			if (child.exitCode === null) {
				child.kill('SIGINT');
				await exited;
			}
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

async function freePort(): Promise<number> {
	return await new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = typeof address === 'object' && address ? address.port : 0;
			server.close(() => resolve(port));
		});
	});
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
	const deadline = Date.now() + 10_000;
	while (Date.now() < deadline) {
		if (child.exitCode !== null)
			throw new Error(`pgbouncer exited with ${child.exitCode}: ${output()}`);
		const open = await new Promise<boolean>((resolve) => {
			const socket = createConnection({ host: '127.0.0.1', port });
			socket.once('connect', () => {
				socket.destroy();
				resolve(true);
			});
			socket.once('error', () => resolve(false));
		});
		if (open) return;
		await sleep(100);
	}
	throw new Error(`pgbouncer did not listen on ${port} within 10 s: ${output()}`);
}
