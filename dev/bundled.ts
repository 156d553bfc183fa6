import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowFile } from './harness/n8n';
import { REPO_ROOT } from './harness/paths';
import { STORE_CREDENTIAL_ID } from './workflows';

/** The demo API address the bundled workflows point at, as shipped. */
export const SHIPPED_DEMO_URL = 'http://127.0.0.1:5680';

/**
 * The bundled workflows as a user imports them, with the two things a user sets pointed at the
 * test's own: the Reliability Store credential and the demo API's address.
 */
export function bundledWorkflows(
	demoUrl: string,
	credentialId = STORE_CREDENTIAL_ID,
): WorkflowFile[] {
	const dir = join(REPO_ROOT, 'workflows');
	return readdirSync(dir)
		.filter((file) => file.endsWith('.json'))
		.map((file) => {
			const text = readFileSync(join(dir, file), 'utf8')
				.split(SHIPPED_DEMO_URL)
				.join(demoUrl)
				.split('"id": "reliabilityStoreLocal"')
				.join(`"id": "${credentialId}"`);
			return JSON.parse(text) as WorkflowFile;
		});
}

/**
 * Which bundled workflows to activate: the ones with a webhook on every version; on n8n 2.x also
 * every workflow another one calls (2.x runs only published sub-workflows, and refuses to
 * publish a caller before its callees).
 */
export function bundledToActivate(majorVersion: number): string[] {
	const triggered = [
		'relLeadRouting01',
		'relReplayWorkflow',
		'relRecoverWorkflow',
		'relDailyDigest01',
		'relHeartbeatWatch',
		'relHousekeeping1',
	];
	return majorVersion >= 2 ? ['relAlertWorkflow', 'relErrorHandler1', ...triggered] : triggered;
}
