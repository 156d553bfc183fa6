import { closeAllStores } from '../lib/store';
import { ensurePostgres, exportPgEnv } from '../dev/harness/postgres';
import { checkItems, checkProtocol } from '../test/protocol/check';

/**
 * npm run check:protocol [-- --schedules N] [-- --seed S]: two searches against real Postgres.
 * The write model: randomized schedules of concurrent executions, redeliveries, operators and the
 * Replay workflow, with lost responses, timeouts, crashes, lease expiry, store errors, key expiry,
 * breaker openings, pauses and resumes. The item model (test/protocol/items.ts): Event Dedupe's
 * inbox through every way n8n ends an execution (success, error, crash reported once or twice,
 * cancel), the Error handler, Recover, Release and Check Order, checked per delivered item
 * without delivering anything again. Prints a failing schedule (shrunk) with its seed; the last
 * line is {"bench":"protocol","schedules":N,"violations":V,"seed":S,"items":{...,"reached":{...}}},
 * and an interleaving kind no item schedule reached fails the run.
 */
function flag(name: string, fallback?: number): number | undefined {
	const at = process.argv.indexOf(`--${name}`);
	if (at < 0) return fallback;
	const value = Number(process.argv[at + 1]);
	if (!Number.isInteger(value) || value < 0)
		throw new Error(`--${name} needs a whole number, got ${process.argv[at + 1]}`);
	return value;
}

async function main(): Promise<void> {
	const schedules = flag('schedules', 500)!;
	const seed = flag('seed');
	const postgres = await ensurePostgres('protocol');
	exportPgEnv(postgres.settings);
	const started = Date.now();
	try {
		const result = await checkProtocol({
			schedules,
			seed,
			onSchedule: (done) => {
				if (done % 50 === 0)
					process.stderr.write(
						`[check:protocol] ${done} schedules, ${Math.round((Date.now() - started) / 1000)} s\n`,
					);
			},
		});
		const items = await checkItems({
			schedules,
			seed,
			onSchedule: (done) => {
				if (done % 50 === 0)
					process.stderr.write(
						`[check:protocol] items: ${done} schedules, ${Math.round((Date.now() - started) / 1000)} s\n`,
					);
			},
		});
		if (items.failure) {
			console.log(
				`An item schedule lost an item (seed ${items.seed}${items.failure.shrunk ? ', shrunk' : ''}):`,
			);
			console.log(JSON.stringify(items.failure.schedule, null, 2));
			console.log('Violations:');
			for (const violation of items.failure.violations) console.log(`- ${violation}`);
			console.log('Keep it as a regression: add it to test/protocol/item-regressions.json.');
		}
		if (items.unreached.length > 0)
			console.log(`No item schedule reached: ${items.unreached.join(', ')}`);
		if (result.failure) {
			console.log(
				`A schedule broke the protocol (seed ${result.seed}${result.failure.shrunk ? ', shrunk' : ''}):`,
			);
			console.log(JSON.stringify(result.failure.schedule, null, 2));
			console.log('Violations:');
			for (const violation of result.failure.violations) console.log(`- ${violation}`);
			console.log('Keep it as a regression: add it to test/protocol/regressions.json.');
		}
		console.log(
			JSON.stringify({
				bench: 'protocol',
				schedules: result.schedules,
				violations: result.violations + items.violations,
				seed: result.seed,
				items: {
					schedules: items.schedules,
					violations: items.violations,
					seed: items.seed,
					reached: items.reached,
				},
			}),
		);
		process.exitCode =
			result.violations + items.violations > 0 || items.unreached.length > 0 ? 1 : 0;
	} finally {
		await closeAllStores();
		if (postgres.embedded) await postgres.stop();
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
