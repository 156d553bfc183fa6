import { DEFAULT_SLICES, deleteInSlices, type Slices, type Store } from '../store';
import { purgeKeysSql } from './sql';

/**
 * Deletes succeeded and failed key records past their retention (expires_at) with their saved
 * responses; says how many. Records in progress or with an unknown outcome are never purged.
 */
export async function purgeExpiredKeys(
	store: Store,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit, after) => purgeKeysSql(store, { limit, after }),
		slices,
	);
}
