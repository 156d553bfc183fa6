import type { Store } from '../store';
import { recordBreakerSql } from './sql';

/**
 * The circuit breaker of an integration, shared by every worker through one row: a streak of
 * consecutive transient failures (attempts, in the order they happened, across runs) opens it
 * for a cool-down; any success ends the streak. While it is open, writes to the integration are
 * held instead of sent. A success ends the streak in the statement that settles it (see
 * settleKeysSql), so the healthy path writes the breaker only when it has a streak or is open.
 */

/** What one run saw, in order: each transient failure adds to the streak, a success resets it. */
export class BreakerStreak {
	private failures = 0;
	private sawSuccess = false;

	failure(): void {
		this.failures++;
	}

	success(): void {
		this.sawSuccess = true;
		this.failures = 0;
	}

	/** Nothing to record: the run made no attempt that counts. */
	get empty(): boolean {
		return !this.sawSuccess && this.failures === 0;
	}

	/** After a success, the streak is what followed the last one; else it adds to the stored one. */
	get values(): { reset: boolean; failures: number } {
		return { reset: this.sawSuccess, failures: this.failures };
	}
}

/**
 * Records a run's streak at its end. When a settle of the run recorded a success, that statement
 * already ended the streak as the success happened: only the failures after the run's last
 * success are added, to what other runs recorded since (nothing to write when there were none).
 * A success nothing settled (a lookup's answer, a superseded owner's 2xx) ends it here.
 */
export async function recordBreaker(
	store: Store,
	integration: string,
	streak: BreakerStreak,
	settings: { threshold: number; coolDownSeconds: number },
	settledSuccess: boolean,
): Promise<void> {
	if (streak.empty) return;
	const { failures } = streak.values;
	if (settledSuccess && failures === 0) return;
	const reset = streak.values.reset && !settledSuccess;
	await store.query(
		recordBreakerSql(store, {
			integration,
			reset,
			failures,
			threshold: settings.threshold,
			coolDownSeconds: settings.coolDownSeconds,
		}),
	);
}
