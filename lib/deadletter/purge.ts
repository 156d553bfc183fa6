import { deleteInSlices, type Store } from '../store';
import { purgeDailyStatsSql, purgeSql } from './sql';

/** Deletes closed records past retention and says how many; open records are never purged. */
export async function purgeDeadLetters(store: Store, sliceSize = 10_000): Promise<number> {
	return await deleteInSlices(store, (limit) => purgeSql(store, { limit }), sliceSize);
}

/**
 * Deletes the daily stats rollup for days more than `olderThanDays` ago; says how many rows.
 * The rollup outlives the records it counts, so keep it at least as long as the stats look back.
 */
export async function purgeDeadLetterStats(
	store: Store,
	olderThanDays: number,
	sliceSize = 10_000,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit) => purgeDailyStatsSql(store, { olderThanDays, limit }),
		sliceSize,
	);
}
