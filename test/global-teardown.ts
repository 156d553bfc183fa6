import type { RunningPostgres } from '../dev/harness/postgres';

export default async function globalTeardown(): Promise<void> {
	const started =
		(globalThis as { __reliabilityPostgres?: RunningPostgres[] }).__reliabilityPostgres ?? [];
	await Promise.all(started.map((pg) => pg.stop()));
}
