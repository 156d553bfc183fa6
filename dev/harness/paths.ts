import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root and the cache outside it where n8n, Node.js and embedded Postgres live. */
export const REPO_ROOT = resolve(__dirname, '..', '..');

export const CACHE_DIR =
	process.env.RELIABILITY_CACHE_DIR ??
	join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'n8n-nodes-reliability');

/** The n8n versions the suite runs against: the newest 2.x that installs here, and 1.123.x. */
export const DEFAULT_N8N_VERSIONS = ['2.40.7', '1.123.81'];

export function n8nVersionsUnderTest(): string[] {
	const fromEnv = process.env.N8N_TEST_VERSIONS?.split(',')
		.map((v) => v.trim())
		.filter(Boolean);
	return fromEnv && fromEnv.length > 0 ? fromEnv : DEFAULT_N8N_VERSIONS;
}

/**
 * The environment variables through which the global setup hands a version's install and its
 * prepared user folder to the test files (jest runs them in other processes).
 */
export function versionEnv(version: string): { install: string; template: string } {
	const name = version.replace(/\./g, '_');
	return { install: `RELIABILITY_N8N_${name}`, template: `RELIABILITY_N8N_TEMPLATE_${name}` };
}
