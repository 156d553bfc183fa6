import type { SqlQuery, Store } from './store';
import { purgeTrailSql } from './sql/trails';

/**
 * Runs a bounded DELETE (`slice` builds it for a slice of at most `sliceSize` rows) until a slice
 * comes back short, and says how many rows went. Each slice is its own short statement, so a
 * purge of millions of rows never holds a long transaction that blocks claims or keeps vacuum
 * from cleaning up.
 */
export async function deleteInSlices(
	store: Store,
	slice: (sliceSize: number) => SqlQuery,
	sliceSize: number,
): Promise<number> {
	let total = 0;
	for (;;) {
		const { rowCount } = await store.execute(slice(sliceSize));
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
	return await deleteInSlices(
		store,
		(limit) => purgeTrailSql(store, { trail, olderThanDays, limit }),
		sliceSize,
	);
}
