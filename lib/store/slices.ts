import type { Store } from './store';
import { purgeTrailSql } from './sql/trails';

/**
 * Runs a bounded DELETE (its last parameter the slice size) until a slice comes back short, and
 * says how many rows went. Each slice is its own short statement, so a purge of millions of rows
 * never holds a long transaction that blocks claims or keeps vacuum from cleaning up.
 */
export async function deleteInSlices(
	store: Store,
	sql: string,
	values: unknown[],
	sliceSize: number,
): Promise<number> {
	let total = 0;
	for (;;) {
		const { rowCount } = await store.execute(sql, [...values, sliceSize]);
		total += rowCount;
		if (rowCount < sliceSize) return total;
	}
}

/** Deletes an audit trail's lines older than `olderThanDays`, in slices; says how many went. */
export async function purgeTrail(
	store: Store,
	trail: 'pause_events' | 'drill_events',
	olderThanDays: number,
	sliceSize = 10_000,
): Promise<number> {
	return await deleteInSlices(store, purgeTrailSql(store, trail), [olderThanDays], sliceSize);
}
