import { purgeDeadLetters, purgeDeadLetterStats } from '../deadletter';
import { purgeEntityVersions, purgeExecutionReports, purgeExpiredEvents } from '../dedupe';
import { purgeExpiredKeys } from '../idempotency/purge';
import { inRange, LIMITS } from '../limits';
import { purgeMessages } from '../outbox/purge';
import type { Store } from '../store';
import { purgeTrail, type Slices } from '../store/slices';

/**
 * Housekeeping: every table of the store with a retention purged by it, so the store stays the
 * size of its retention window. Rows with their own expiry (key records, event IDs, dead letters)
 * go when it passes; the rest by the ages given here. Open, in-progress, held and unknown rows
 * are never purged, and each table goes in short slices that skip rows a claim or write holds.
 */
export interface HousekeepingOptions {
	/** Entity versions untouched and outbox messages settled for longer than this go. */
	retentionDays: number;
	/** Pause, resume and fire drill history older than this goes. */
	historyRetentionDays: number;
	/** Daily dead letter stats older than this go. */
	statsRetentionDays: number;
	/**
	 * Rows per DELETE statement: 1,000 by default, a few ms each, so a claim or write running
	 * beside a slice shares the CPU with a short statement (see docs/benchmarks.md, bench:soak),
	 * where the nodes' own single purges take 10,000.
	 */
	sliceSize: number;
	/**
	 * After each full slice, rest this share (in percent) of the time the slice took, so live
	 * claims and writes keep the database and the cores between slices; 0 purges flat out.
	 */
	restPercent: number;
}

export const DEFAULT_HOUSEKEEPING: HousekeepingOptions = {
	retentionDays: 30,
	historyRetentionDays: 365,
	statsRetentionDays: 400,
	sliceSize: 1_000,
	restPercent: 100,
};

/** Rows deleted per table. */
export interface HousekeepingResult {
	idempotencyKeys: number;
	processedEvents: number;
	entityVersions: number;
	deadLetters: number;
	deadLetterDaily: number;
	pauseEvents: number;
	drillEvents: number;
	outboxMessages: number;
	/** Settled failed, crashed and stopped executions (repeated reports are told by them). */
	executionReports: number;
}

/**
 * Purges every table, resting between slices as `restPercent` says; a cancelled run (`signal`)
 * stops before its next slice and says what it deleted. The store is held for the whole purge, so
 * a rest is never taken for a store nobody uses and closed under it.
 */
export async function purgeExpired(
	store: Store,
	options: Partial<HousekeepingOptions> = {},
	signal?: AbortSignal,
): Promise<HousekeepingResult> {
	const { retentionDays, historyRetentionDays, statsRetentionDays, sliceSize, restPercent } = {
		retentionDays: inRange(
			options.retentionDays ?? DEFAULT_HOUSEKEEPING.retentionDays,
			LIMITS.retentionDays,
		),
		historyRetentionDays: inRange(
			options.historyRetentionDays ?? DEFAULT_HOUSEKEEPING.historyRetentionDays,
			LIMITS.historyRetentionDays,
		),
		statsRetentionDays: inRange(
			options.statsRetentionDays ?? DEFAULT_HOUSEKEEPING.statsRetentionDays,
			LIMITS.statsRetentionDays,
		),
		sliceSize: inRange(options.sliceSize ?? DEFAULT_HOUSEKEEPING.sliceSize, LIMITS.purgeSliceSize),
		restPercent: inRange(
			options.restPercent ?? DEFAULT_HOUSEKEEPING.restPercent,
			LIMITS.purgeRestPercent,
		),
	};
	const slices: Slices = { size: sliceSize, rest: restPercent / 100, signal };
	// One table after another: a purge is background work and takes one connection at a time.
	const release = store.hold();
	try {
		return {
			idempotencyKeys: await purgeExpiredKeys(store, slices),
			processedEvents: await purgeExpiredEvents(store, null, slices),
			entityVersions: await purgeEntityVersions(store, retentionDays, slices),
			deadLetters: await purgeDeadLetters(store, slices),
			deadLetterDaily: await purgeDeadLetterStats(store, statsRetentionDays, slices),
			pauseEvents: await purgeTrail(store, 'pause_events', historyRetentionDays, slices),
			drillEvents: await purgeTrail(store, 'drill_events', historyRetentionDays, slices),
			outboxMessages: await purgeMessages(store, retentionDays, slices),
			executionReports: await purgeExecutionReports(store, retentionDays, slices),
		};
	} finally {
		release();
	}
}
