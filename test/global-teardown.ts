import { rmSync } from 'node:fs';
import { n8nVersionsUnderTest, versionEnv } from '../dev/harness/paths';
import type { RunningPostgres } from '../dev/harness/postgres';

export default async function globalTeardown(): Promise<void> {
	const started =
		(globalThis as { __reliabilityPostgres?: RunningPostgres[] }).__reliabilityPostgres ?? [];
	await Promise.all(started.map((pg) => pg.stop()));
	// The user folders the global setup prepared for this run's n8n starts.
	for (const version of n8nVersionsUnderTest()) {
		const folder = process.env[versionEnv(version).template];
		if (folder) rmSync(folder, { recursive: true, force: true });
	}
}
