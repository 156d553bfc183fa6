import { checkProtocol, withModelEnv } from './check';
import regressions from './regressions.json';
import { runSchedule } from './run';
import type { Schedule } from './schedule';

/**
 * The write model's invariants (the item model is item-model.test.ts, a file of its own so the
 * two searches run side by side), checked by search: a short budget of random schedules on every
 * `npm test` (the full runs are `npm run check:protocol -- --schedules N`), and every schedule
 * the search ever found, replayed as it was.
 */
const budget = Number(process.env.PROTOCOL_SCHEDULES ?? 300);

describe('the write, claim and dead-letter protocols', () => {
	// A schedule whose break depended on timing is run several times (its `repeat`).
	it.each(
		regressions.map((r) => [r.name, r.schedule, (r as { repeat?: number }).repeat ?? 1] as const),
	)('holds on a schedule that once broke it: %s', async (_name, schedule, repeat) => {
		const violations = await withModelEnv(async (env) => {
			const found: string[] = [];
			for (let n = 0; n < repeat && found.length === 0; n++) {
				found.push(
					...(await runSchedule(env, schedule as Schedule, `reg${Date.now() % 100000}n${n}`)),
				);
			}
			return found;
		});
		expect(violations).toEqual([]);
	});

	it(
		`holds on ${budget} random schedules of executions, crashes, leases, operators and replays`,
		async () => {
			const result = await checkProtocol({ schedules: budget });
			expect(result.failure).toBeUndefined();
			expect(result).toMatchObject({ schedules: budget, violations: 0 });
		},
		30 * 60_000,
	);
});
