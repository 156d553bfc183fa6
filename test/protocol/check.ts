import fc from 'fast-check';
import { Store } from '../../lib/store';
import { dropSchema, storeConfig, uniqueSchema } from '../helpers/store';
import {
	type ItemSchedule,
	itemScheduleArbitrary,
	type ReachedKind,
	REQUIRED_KINDS,
	runItemSchedule,
} from './items';
import { type ModelEnv, runSchedule } from './run';
import { type Schedule, scheduleArbitrary } from './schedule';

/**
 * The model check: fast-check generates schedules, each runs against real Postgres, and a
 * schedule that breaks an invariant is shrunk to a minimal one and reported with its seed and
 * violations, ready to be kept as a regression.
 */
export interface CheckResult {
	schedules: number;
	violations: number;
	seed: number;
	failure?: { schedule: Schedule; violations: string[]; shrunk: boolean };
}

export async function withModelEnv<T>(work: (env: ModelEnv) => Promise<T>): Promise<T> {
	const schema = uniqueSchema('protocol');
	const workers = Array.from({ length: 3 }, () => new Store(storeConfig(schema)));
	const admin = new Store(storeConfig(schema));
	try {
		await admin.ready();
		return await work({ workers, admin });
	} finally {
		await Promise.all([...workers, admin].map((s) => s.close().catch(() => undefined)));
		await dropSchema(schema);
	}
}

export async function checkProtocol(options: {
	schedules: number;
	seed?: number;
	onSchedule?: (done: number) => void;
}): Promise<CheckResult> {
	const seed = options.seed ?? Date.now() % 2_147_483_647;
	return await withModelEnv(async (env) => {
		let count = 0;
		const found = new Map<Schedule, string[]>();
		const property = fc.asyncProperty(scheduleArbitrary, async (schedule) => {
			const violations = await runSchedule(env, schedule, `s${seed % 100000}n${++count}`);
			options.onSchedule?.(count);
			if (violations.length > 0) found.set(schedule, violations);
			return violations.length === 0;
		});
		const details = await fc.check(property, {
			numRuns: options.schedules,
			seed,
			endOnFailure: false,
		});
		if (!details.failed) return { schedules: details.numRuns, violations: 0, seed };
		const schedule = details.counterexample![0];
		const violations = found.get(schedule) ?? [
			'(the failure did not repeat when the schedule ran again)',
		];
		return {
			schedules: details.numRuns,
			violations: 1,
			seed,
			failure: { schedule, violations, shrunk: details.numShrinks > 0 },
		};
	});
}

export interface ItemCheckResult {
	schedules: number;
	violations: number;
	seed: number;
	/** How many schedules reached each interleaving kind; a kind never reached fails the run. */
	reached: Record<ReachedKind, number>;
	unreached: ReachedKind[];
	failure?: { schedule: ItemSchedule; violations: string[]; shrunk: boolean };
}

/** The item model's search (see items.ts): schedules, shrinking, and the kinds each reached. */
export async function checkItems(options: {
	schedules: number;
	seed?: number;
	onSchedule?: (done: number) => void;
}): Promise<ItemCheckResult> {
	const seed = options.seed ?? Date.now() % 2_147_483_647;
	return await withModelEnv(async (env) => {
		let count = 0;
		const reached = new Map<ReachedKind, number>();
		const found = new Map<ItemSchedule, string[]>();
		const property = fc.asyncProperty(itemScheduleArbitrary, async (schedule) => {
			const violations = await runItemSchedule(
				env.admin,
				schedule,
				`i${seed % 100000}n${++count}`,
				reached,
			);
			options.onSchedule?.(count);
			if (violations.length > 0) found.set(schedule, violations);
			return violations.length === 0;
		});
		const details = await fc.check(property, {
			numRuns: options.schedules,
			seed,
			endOnFailure: false,
		});
		const counts = Object.fromEntries(
			REQUIRED_KINDS.map((kind) => [kind, reached.get(kind) ?? 0]),
		) as Record<ReachedKind, number>;
		const unreached = REQUIRED_KINDS.filter((kind) => counts[kind] === 0);
		if (!details.failed)
			return { schedules: details.numRuns, violations: 0, seed, reached: counts, unreached };
		const schedule = details.counterexample![0];
		return {
			schedules: details.numRuns,
			violations: 1,
			seed,
			reached: counts,
			unreached,
			failure: {
				schedule,
				violations: found.get(schedule) ?? [
					'(the failure did not repeat when the schedule ran again)',
				],
				shrunk: details.numShrinks > 0,
			},
		};
	});
}
