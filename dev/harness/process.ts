import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { N8nInstall } from './install';
import { waitFor } from './ports';

/**
 * One n8n process the harness started (`n8n start` or `n8n worker`): spawned in a process group
 * of its own, so that stop and kill reach its task runner too, with its output appended to a log
 * file, and ready when its subclass's probe says so. A process that exits first fails the start
 * naming the log; one that is not ready in time is killed. Only what was started here is ever
 * stopped.
 */
export abstract class ManagedProcess {
	private child?: ChildProcess;

	protected constructor(
		readonly install: N8nInstall,
		protected readonly env: NodeJS.ProcessEnv,
		readonly logFile: string,
	) {}

	/** What the process is called in errors and waits. */
	protected abstract get label(): string;

	/** The n8n command and its arguments. */
	protected abstract get args(): string[];

	/** True once the process serves what the tests need. */
	protected abstract ready(): Promise<boolean>;

	async start(timeoutMs = 180_000): Promise<void> {
		const label = this.label;
		const log = createWriteStream(this.logFile, { flags: 'a' });
		const child = spawn(this.install.node, [this.install.n8n, ...this.args], {
			env: this.env,
			detached: true,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		child.stdout?.pipe(log);
		child.stderr?.pipe(log);
		let exited: string | undefined;
		child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
		const exitError = () =>
			new Error(`${label} ${exited} before it was ready; see ${this.logFile}`);
		await waitFor(
			`${label} (log: ${this.logFile})`,
			async () => {
				if (exited) throw exitError();
				return (await this.ready()) ? true : undefined;
			},
			timeoutMs,
			500,
		).catch(async (error: Error) => {
			if (exited) throw exitError();
			// Not ready in time: the process is ours and nobody else holds it, so stop it here.
			await killGroup(child).catch(() => undefined);
			throw error;
		});
		this.child = child;
	}

	/** SIGTERM to the process group (n8n and its task runner), SIGKILL after a grace. */
	async stop(graceMs = 20_000): Promise<void> {
		await stopGroup(this.child, graceMs);
		this.child = undefined;
	}

	/** Kills the process group at once, as a crash or an OOM kill would, leaving work unfinished. */
	async kill(): Promise<void> {
		await killGroup(this.child);
		this.child = undefined;
	}

	/** Started, and since exited on its own (neither stopped nor killed through this object). */
	get exitedOnItsOwn(): boolean {
		return (
			this.child !== undefined && (this.child.exitCode !== null || this.child.signalCode !== null)
		);
	}
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
