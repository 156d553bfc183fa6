import { checkItems, withModelEnv } from './check';
import itemRegressions from './item-regressions.json';
import { type ItemSchedule, runItemSchedule } from './items';

/**
 * Every item accounted for through n8n's execution lifecycle, checked by search: a short budget
 * of random schedules on every `npm test` (the full run is `npm run check:protocol -- --schedules
 * N`), and every schedule the search ever found, replayed as it was.
 */
// Item schedules are sequential and short: a thousand take about half a minute. Three thousand
// reach every kind (the rarest, a refused release, some ten times) on any seed.
const itemBudget = Number(process.env.PROTOCOL_ITEM_SCHEDULES ?? 3000);

describe("the item model of n8n's execution lifecycle", () => {
	it.each(itemRegressions.map((r) => [r.name, r.schedule] as const))(
		'every item is accounted for on a schedule that once lost one: %s',
		async (_name, schedule) => {
			const violations = await withModelEnv(
				async (env) =>
					await runItemSchedule(
						env.admin,
						schedule as ItemSchedule,
						`ireg${Date.now() % 100000}`,
						new Map(),
					),
			);
			expect(violations).toEqual([]);
		},
	);

	it(
		`accounts for every item on ${itemBudget} random schedules of n8n's execution lifecycle, reaching every kind`,
		async () => {
			const result = await checkItems({ schedules: itemBudget });
			expect(result.failure).toBeUndefined();
			expect(result.unreached).toEqual([]);
			expect(result).toMatchObject({ schedules: itemBudget, violations: 0 });
		},
		15 * 60_000,
	);
});
