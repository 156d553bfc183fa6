import { rmSync } from 'node:fs';
import type { N8nInstall } from '../../dev/harness/install';
import {
	type CredentialFile,
	type N8nProcess,
	recordStartLog,
	startN8n,
	type WorkflowFile,
} from '../../dev/harness/n8n';
import { versionEnv } from '../../dev/harness/paths';
import type { PgSettings } from '../../dev/harness/postgres';
import { storeCredential } from '../../dev/workflows';
import { dropSchema, uniqueSchema } from '../helpers/store';

/** Helpers shared by the end-to-end files: the install for a version, one n8n per describe block. */
export function installFor(version: string): N8nInstall {
	const raw = process.env[versionEnv(version).install];
	if (!raw)
		throw new Error(
			`n8n ${version} was not installed by the global setup (run the e2e project through jest, not a single file outside it)`,
		);
	return JSON.parse(raw) as N8nInstall;
}

/** The user folder the global setup prepared for a version (package installed, database migrated). */
function templateFor(version: string): string | undefined {
	return process.env[versionEnv(version).template];
}

/** One n8n per describe block, with its own store schema; everything removed afterwards. */
export interface E2eContext {
	n8n: N8nProcess;
	schema: string;
}

export async function startWithPackage(
	version: string,
	label: string,
	workflows: WorkflowFile[],
	extraCredentials: CredentialFile[] = [],
	activate: string[] = workflows.map((w) => w.id),
): Promise<E2eContext> {
	const schema = uniqueSchema(`e2e_${label}`);
	const n8n = await startN8n({
		install: installFor(version),
		tarball: process.env.RELIABILITY_TARBALL,
		template: templateFor(version),
		credentials: [storeCredential(schema), ...extraCredentials],
		workflows,
		activate,
		importBy: 'rest',
	});
	return { n8n, schema };
}

/** What a file may set beyond the defaults of startWithPackage. */
export interface E2eStartOptions {
	workflows: WorkflowFile[];
	credentials?: CredentialFile[];
	/** Workflow ids to activate; default all of them. */
	activate?: string[];
	/** Extra environment of n8n (queue mode, its database). */
	env?: Record<string, string>;
	/** The Postgres server the Reliability Store credential points at; default the shared test server. */
	store?: PgSettings;
}

/** startWithPackage with an environment and a store server of the file's choosing. */
export async function startWith(
	version: string,
	label: string,
	options: E2eStartOptions,
): Promise<E2eContext> {
	const schema = uniqueSchema(`e2e_${label}`);
	const n8n = await startN8n({
		install: installFor(version),
		tarball: process.env.RELIABILITY_TARBALL,
		template: templateFor(version),
		credentials: [storeCredential(schema, options.store), ...(options.credentials ?? [])],
		workflows: options.workflows,
		activate: options.activate ?? options.workflows.map((w) => w.id),
		env: options.env,
		importBy: 'rest',
	});
	return { n8n, schema };
}

/**
 * Ends a file's n8n and removes what it left. The instance is thrown away with its folder and
 * schema, so it is killed rather than shut down gracefully (n8n's own shutdown took 2 s a start,
 * 88 s of a whole run).
 */
export async function stopAndClean(context: E2eContext | undefined): Promise<void> {
	if (!context) return;
	const stopping = Date.now();
	await context.n8n.kill();
	recordStartLog({ version: context.n8n.install.version, stop: Date.now() - stopping });
	await dropSchema(context.schema);
	if (!process.env.RELIABILITY_KEEP_RUNS)
		rmSync(context.n8n.userFolder, { recursive: true, force: true });
}
