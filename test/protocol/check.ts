import fc from 'fast-check';
import { Store } from '../../lib/store';
import { dropSchema, storeConfig, uniqueSchema } from '../helpers/store';
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
