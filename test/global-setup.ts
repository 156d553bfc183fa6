import { cleanOldRuns, installN8n, packPackage } from '../dev/harness/install';
import { prepareTemplate } from '../dev/harness/n8n';
import { storeCredential } from '../dev/workflows';
import { n8nVersionsUnderTest, versionEnv } from '../dev/harness/paths';
import {
	ensurePostgres,
	exportPgEnv,
	type RunningPostgres,
	startEmbeddedPostgres,
} from '../dev/harness/postgres';

/**
 * Runs once before all projects. Postgres: the configured server, or an embedded one. A second,
 * password-checking embedded server for the credential test's "wrong password" case. n8n: every
 * version under test installed into the cache (minutes the first time, seconds after), and the
 * package packed once, as users receive it.
 */
/** The projects named by --selectProjects on jest's command line; undefined means all. */
function selectedProjects(argv = process.argv): string[] | undefined {
	const at = argv.indexOf('--selectProjects');
	if (at < 0) return undefined;
	const names: string[] = [];
	for (const arg of argv.slice(at + 1)) {
		if (arg.startsWith('-')) break;
		names.push(arg);
	}
	return names;
}

export default async function globalSetup(): Promise<void> {
	const started: RunningPostgres[] = [];
	const postgres = await ensurePostgres('test');
	if (postgres.embedded) started.push(postgres);
	exportPgEnv(postgres.settings);

	const selected = selectedProjects();
	const wants = (project: string): boolean => !selected || selected.includes(project);

	if (wants('integration')) {
		const passwordServer = await startEmbeddedPostgres('password-auth', 'scram-sha-256');
		started.push(passwordServer);
		process.env.RELIABILITY_TEST_PASSWORD_PG = JSON.stringify(passwordServer.settings);
	}

	if (wants('e2e')) {
		cleanOldRuns();
		const tarball = await packPackage();
		process.env.RELIABILITY_TARBALL = tarball;
		for (const version of n8nVersionsUnderTest()) {
			const install = await installN8n(version);
			const names = versionEnv(version);
			process.env[names.install] = JSON.stringify(install);
			// Every e2e start brings the store credential, under the same ID: seeded here, it is
			// updated through the REST API at each start instead of imported by CLI.
			process.env[names.template] = await prepareTemplate(install, tarball, [
				storeCredential('e2e_template_unused'),
			]);
		}
	}
	(globalThis as { __reliabilityPostgres?: RunningPostgres[] }).__reliabilityPostgres = started;
}
