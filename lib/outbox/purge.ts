import { DEFAULT_SLICES, deleteInSlices, type Slices, type Store } from '../store';
import { purgeMessagesSql } from './sql';

/**
 * Deletes messages that were settled (done or dead) more than `olderThanDays` ago, in slices so
 * a large backlog never holds one long statement; says how many. Open messages are never purged.
 */
export async function purgeMessages(
	outbox: Store,
	olderThanDays: number,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		outbox,
		(limit, after) => purgeMessagesSql(outbox, { olderThanDays, limit, after }),
		slices,
	);
}
