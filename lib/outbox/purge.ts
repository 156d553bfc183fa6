import type { Store } from '../store';
import { purgeMessagesSql } from './sql';

/**
 * Deletes messages that were settled (done or dead) more than `olderThanDays` ago, in slices so
 * a large backlog never holds one long statement; says how many. Open messages are never purged.
 */
export async function purgeMessages(
	outbox: Store,
	olderThanDays: number,
	sliceSize = 10_000,
): Promise<number> {
	let total = 0;
	for (;;) {
		const [{ n }] = await outbox.query<{ n: number }>(
			purgeMessagesSql(outbox, { olderThanDays, limit: sliceSize }),
		);
		total += n;
		if (n < sliceSize) return total;
	}
}
