import { rmSync } from 'node:fs';
import type { RunningPostgres } from '../dev/harness/postgres';

export default async function globalTeardown(): Promise<void> {
	const started =
		(globalThis as { __reliabilityPostgres?: RunningPostgres[] }).__reliabilityPostgres ?? [];
	await Promise.all(started.map((pg) => pg.stop()));
	// The user folders the global setup prepared for this run's n8n starts.
	for (const [name, folder] of Object.entries(process.env))
		if (name.startsWith('RELIABILITY_N8N_TEMPLATE_') && folder)
			rmSync(folder, { recursive: true, force: true });
}
