/**
 * `npm start`: a running n8n at http://localhost:5678 with this package loaded, a Reliability
 * Store credential already created (pointing at the Postgres that PG* / DATABASE_URL name, or
 * an embedded one), and the owner login printed. Ctrl-C stops everything it started.
 *
 * N8N_VERSION picks the n8n version (default: the newest 2.x under test); N8N_PORT the port.
 */
import { join } from 'node:path';
import { DEFAULT_OWNER } from '../dev/harness/rest';
import { installN8n, packPackage } from '../dev/harness/install';
import { type N8nProcess, startN8n } from '../dev/harness/n8n';
import { CACHE_DIR, DEFAULT_N8N_VERSIONS } from '../dev/harness/paths';
import { freePort } from '../dev/harness/ports';
import { ensurePostgres, type RunningPostgres } from '../dev/harness/postgres';
import { DemoApi } from '../demo/api';
import { bundledToActivate, bundledWorkflows, SHIPPED_DEMO_URL } from '../dev/bundled';

const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function portIsFree(port: number): Promise<boolean> {
	const { createServer } = await import('node:net');
	return await new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

async function main(): Promise<void> {
	const version = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSIONS[0];
	const port = Number(process.env.N8N_PORT ?? 5678);
	if (!(await portIsFree(port))) {
		throw new Error(
			`Port ${port} is taken. Stop what listens there, or run N8N_PORT=<free port> npm start (for example N8N_PORT=${await freePort()}).`,
		);
	}

	say(
		`Postgres for the store: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'PG* variables / 127.0.0.1:5432'}, else an embedded server...`,
	);
	const postgres: RunningPostgres = await ensurePostgres('start');
	say(
		`  ${postgres.embedded ? 'embedded Postgres started' : 'using'} ${postgres.settings.host}:${postgres.settings.port}/${postgres.settings.database}`,
	);

	say(
		`n8n ${version} (installed into ${CACHE_DIR} on first use; this takes several minutes once)...`,
	);
	const install = await installN8n(version);
	const tarball = await packPackage();

	const demoPort = Number(new URL(SHIPPED_DEMO_URL).port);
	if (!(await portIsFree(demoPort)))
		throw new Error(
			`Port ${demoPort} (the demo API of the worked example) is taken; stop what listens there.`,
		);
	const demo = await new DemoApi().start(demoPort);

	// Set once n8n runs; Ctrl-C before that stops what did start.
	let n8n: N8nProcess | undefined = undefined;
	let stopping = false;
	const stop = async (): Promise<void> => {
		if (stopping) return;
		stopping = true;
		say('\nStopping n8n and what npm start started...');
		await n8n?.stop().catch(() => undefined);
		await demo.stop().catch(() => undefined);
		await postgres.stop().catch(() => undefined);
		process.exit(0);
	};
	process.on('SIGINT', () => void stop());
	process.on('SIGTERM', () => void stop());

	const userFolder = join(CACHE_DIR, `start-${version}`);
	const consoleLogin = {
		user: process.env.RELIABILITY_CONSOLE_USER ?? 'operator',
		password: process.env.RELIABILITY_CONSOLE_PASSWORD ?? 'Reliability-Console-1',
	};
	const metricsToken = process.env.RELIABILITY_METRICS_TOKEN ?? 'reliability-metrics-token';
	n8n = await startN8n({
		install,
		userFolder,
		port,
		tarball,
		logFile: join(userFolder, 'n8n.log'),
		credentials: [
			{
				id: 'reliabilityStoreLocal',
				name: 'Reliability Store (local)',
				type: 'reliabilityStoreApi',
				data: {
					...postgres.settings,
					ssl: 'disable',
					schema: 'n8n_reliability',
					maxConnections: 10,
				},
			},
			// Sign-in for the operator console and the metrics endpoint (webhook authentication).
			{
				id: 'reliabilityConsoleLogin',
				name: 'Reliability console login',
				type: 'httpBasicAuth',
				data: { user: consoleLogin.user, password: consoleLogin.password },
			},
			{
				id: 'reliabilityMetricsToken',
				name: 'Reliability metrics token',
				type: 'httpHeaderAuth',
				data: { name: 'Authorization', value: `Bearer ${metricsToken}` },
			},
		],
		// The bundled workflows, as shipped (they point at this credential and the demo API).
		workflows: bundledWorkflows(SHIPPED_DEMO_URL, 'reliabilityStoreLocal'),
		activate: [
			...bundledToActivate(Number(version.split('.')[0])),
			'relOperatorConsole',
			'relMetricsWorkflow',
		],
	});

	say('');
	say(`n8n ${version} is running at http://localhost:${port}`);
	say(`  sign in as ${DEFAULT_OWNER.email} / ${DEFAULT_OWNER.password}`);
	say(
		`  credential "Reliability Store (local)" points at ${postgres.settings.host}:${postgres.settings.port}/${postgres.settings.database}, schema n8n_reliability`,
	);
	say(
		'  nodes: Idempotent HTTP Write, Event Dedupe, Dead Letter Park, Reliability Control, Transactional Outbox (search "Idempotent", "Dedupe", "Dead Letter", "Reliability" or "Outbox")',
	);
	say(
		`  bundled workflows imported: Worked example, Replay, Recover, Operator console, Metrics, Daily digest, Heartbeat watch (active), Housekeeping (active), Error handler, Alert, Outbox relay (activate it to send Transactional Outbox messages)`,
	);
	say(
		`  operator console: http://localhost:${port}/webhook/reliability-console (sign in as ${consoleLogin.user} / ${consoleLogin.password})`,
	);
	say(
		`  Prometheus metrics: curl -H 'Authorization: Bearer ${metricsToken}' http://localhost:${port}/webhook/reliability-metrics`,
	);
	say(
		`  demo API (enrichment, CRM, alert sink) at ${demo.url}: GET ${demo.url}/crm/contacts, GET ${demo.url}/alerts`,
	);
	say('  try the worked example (posted twice, as a form tool that did not hear back would):');
	say(
		`    curl -s -XPOST http://localhost:${port}/webhook/lead-form -H 'content-type: application/json' -d '{"submissionId":"form-1","email":"ana@acme.io","name":"Ana","phone":"0151 2345678"}'`,
	);
	say(`  n8n's log: ${join(userFolder, 'n8n.log')}`);
	say('Press Ctrl-C to stop.');
	await new Promise(() => undefined);
}

main().catch((error: unknown) => {
	process.stderr.write(
		`npm start failed: ${error instanceof Error ? error.message : String(error)}\n`,
	);
	process.exit(1);
});
