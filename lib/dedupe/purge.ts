import { deleteInSlices, type Store } from '../store';
import { purgeEntityVersionsSql, purgeExpiredSql } from './sql';

/** Purging by retention, in short slices. */

/** Deletes done events past retention (one consumer, or all when null); returns how many. */
export async function purgeExpiredEvents(
	store: Store,
	consumer: string | null,
	sliceSize = 10_000,
): Promise<number> {
	return await deleteInSlices(store, purgeExpiredSql(store), [consumer], sliceSize);
}

/**
 * Deletes the ordering versions of entities untouched for `olderThanDays`, except those whose
 * claim is still in progress; returns how many.
 */
export async function purgeEntityVersions(
	store: Store,
	olderThanDays: number,
	sliceSize = 10_000,
): Promise<number> {
	return await deleteInSlices(store, purgeEntityVersionsSql(store), [olderThanDays], sliceSize);
}
