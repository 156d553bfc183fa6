import { DEFAULT_SLICES, deleteInSlices, type Slices, type Store } from '../store';
import { purgeEntityVersionsSql, purgeExecutionReportsSql, purgeExpiredSql } from './sql';

/** Purging by retention, in short slices. */

/**
 * Deletes done and failed events past retention (one consumer, or all when null); returns how
 * many. A failed claim's item is in a dead letter by then, or was dropped by a named rule: its
 * personal data goes with it. A failed claim that nothing holds yet stays: it is the only copy of
 * its item until Recover's sweep parks it.
 */
export async function purgeExpiredEvents(
	store: Store,
	consumer: string | null,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit, after) => purgeExpiredSql(store, { consumer, limit, after }),
		slices,
	);
}

/**
 * Deletes the ordering versions of entities untouched for `olderThanDays`, except those whose
 * claim is still in progress; returns how many.
 */
export async function purgeEntityVersions(
	store: Store,
	olderThanDays: number,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit) => purgeEntityVersionsSql(store, { olderThanDays, limit }),
		slices,
	);
}

/** Deletes the records of settled executions older than `olderThanDays`; returns how many. */
export async function purgeExecutionReports(
	store: Store,
	olderThanDays: number,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit, after) => purgeExecutionReportsSql(store, { olderThanDays, limit, after }),
		slices,
	);
}
