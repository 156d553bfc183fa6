import { purgeDeadLetters, purgeDeadLetterStats } from '../deadletter';
import { purgeEntityVersions, purgeExecutionReports, purgeExpiredEvents } from '../dedupe';
import { purgeExpiredKeys } from '../idempotency/purge';
import { inRange, LIMITS } from '../limits';
import { purgeMessages } from '../outbox/purge';
import type { Store } from '../store';
import { purgeTrail } from '../store/slices';

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
	/** Rows per DELETE statement. */
	sliceSize: number;
}

export const DEFAULT_HOUSEKEEPING: HousekeepingOptions = {
	retentionDays: 30,
	historyRetentionDays: 365,
	statsRetentionDays: 400,
	sliceSize: 10_000,
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

export async function purgeExpired(
	store: Store,
	options: Partial<HousekeepingOptions> = {},
): Promise<HousekeepingResult> {
	const { retentionDays, historyRetentionDays, statsRetentionDays, sliceSize } = {
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
	};
	// One table after another: a purge is background work and takes one connection at a time.
	return {
		idempotencyKeys: await purgeExpiredKeys(store, sliceSize),
		processedEvents: await purgeExpiredEvents(store, null, sliceSize),
		entityVersions: await purgeEntityVersions(store, retentionDays, sliceSize),
		deadLetters: await purgeDeadLetters(store, sliceSize),
		deadLetterDaily: await purgeDeadLetterStats(store, statsRetentionDays, sliceSize),
		pauseEvents: await purgeTrail(store, 'pause_events', historyRetentionDays, sliceSize),
		drillEvents: await purgeTrail(store, 'drill_events', historyRetentionDays, sliceSize),
		outboxMessages: await purgeMessages(store, retentionDays, sliceSize),
		executionReports: await purgeExecutionReports(store, retentionDays, sliceSize),
	};
}
