import { DEFAULT_SLICES, deleteInSlices, type Slices, type Store } from '../store';
import { purgeDailyStatsSql, purgeSql } from './sql';

/** Deletes closed records past retention and says how many; open records are never purged. */
export async function purgeDeadLetters(
	store: Store,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(store, (limit, after) => purgeSql(store, { limit, after }), slices);
}

/**
 * Deletes the daily stats rollup for days more than `olderThanDays` ago; says how many rows.
 * The rollup outlives the records it counts, so keep it at least as long as the stats look back.
 */
export async function purgeDeadLetterStats(
	store: Store,
	olderThanDays: number,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit, after) => purgeDailyStatsSql(store, { olderThanDays, limit, after }),
		slices,
	);
}
