import { abortableSleep } from '../sleep';
import type { SqlQuery, Store } from './store';
import { purgeTrailSql } from './sql/trails';

/** How a purge deletes: rows per statement, and how long it rests after each full slice. */
export interface Slices {
	/** Rows per DELETE statement. */
	size: number;
	/**
	 * After each full slice, wait this many times as long as the slice took before starting the
	 * next (0: no rest). Live claims and writes then have the database and the machine's cores
	 * to themselves between slices: 1 halves the purge's share of them and doubles its duration.
	 */
	rest: number;
	/** The execution's cancel signal: a cancelled purge stops after the slice it is in. */
	signal?: AbortSignal;
}

/** The single purges' slices (a node's Purge operation): 10,000 rows at a time, no rest. */
export const DEFAULT_SLICES: Readonly<Slices> = Object.freeze({ size: 10_000, rest: 0 });

/**
 * What one slice did: the rows it picked and locked, those of them it deleted, and for an
 * ordered pick where the next slice starts (see `deleteDoomed`).
 */
export interface SliceResult {
	picked: number;
	deleted: number;
	next?: string | null;
}

/** Where `inSlices` reads the time and rests: the real clock, or a test's. */
export interface SliceClock {
	now(): number;
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const REAL_CLOCK: SliceClock = { now: () => performance.now(), sleep: abortableSleep };

/**
 * Runs `deleteSlice` (it picks and locks at most `size` rows, deletes them, and says how many it
 * picked and how many it deleted) until a slice picks fewer than `size` or deletes nothing,
 * resting after each full one as `slices.rest` says, and says how many rows went. The purge goes
 * on after a full slice that deleted fewer than it picked: a row updated after the statement
 * began and before it was locked, still past retention, is picked but not deleted (see
 * `deleteInSlices`), and ending on that short count would leave the rest of the table for the
 * next night; a later slice of this purge, or the next purge, deletes it. A slice that deleted
 * nothing ends it, so rows that can be locked but not deleted (a trigger or row security of the
 * operator's) never keep it going. Each slice is its own short statement, so a purge of millions
 * of rows never holds a long transaction that blocks claims or keeps vacuum from cleaning up.
 * A cancelled purge stops before its next slice (a rest ends at once) and says what it deleted:
 * a purge only deletes what is past retention, so stopping early loses nothing, and the next
 * purge goes on from there. An ordered slice's `next` is handed to the following slice as
 * `after`, where its pick starts.
 */
export async function inSlices(
	slices: Readonly<Slices>,
	deleteSlice: (size: number, after: string | null) => Promise<SliceResult>,
	clock: SliceClock = REAL_CLOCK,
): Promise<number> {
	let total = 0;
	let after: string | null = null;
	while (!slices.signal?.aborted) {
		const began = clock.now();
		const { picked, deleted, next } = await deleteSlice(slices.size, after);
		total += deleted;
		after = next ?? null;
		if (picked < slices.size || deleted === 0) break;
		if (slices.rest > 0) await clock.sleep((clock.now() - began) * slices.rest, slices.signal);
	}
	return total;
}

/**
 * `inSlices` with a bounded DELETE (`slice` builds it for a slice of at most `size` rows). Every
 * purge's slice has the same shape: it picks and locks its rows (`FOR UPDATE SKIP LOCKED`, so a
 * row a claim or write holds is skipped) and deletes them by `ctid`, the address of the version
 * it locked, rather than by a join back on the key (measured on a 1.5M-row key table: 28 ms
 * against 45 ms per slice of 10,000 at the median). A row updated after the statement began and
 * before it was locked, still past retention, is locked in its new version, which the statement
 * cannot see: this slice does not delete it, a later one (or, for an ordered pick whose next
 * slices start past it, the next purge) does. Where the table has an index on its retention
 * column, the pick walks it in order from where the previous slice ended (`after`, see
 * `deleteDoomed`), so every slice costs the same however many went before it (in psql, 300
 * slices of 1,000 over a 3M-row key table: 2 ms each throughout, where a pick from the front grew
 * from 2 to 5 ms); a row skipped because a claim held it then waits for the next purge.
 */
export async function deleteInSlices(
	store: Store,
	slice: (size: number, after: string | null) => SqlQuery,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await inSlices(slices, async (size, after) => {
		const [result] = await store.query<SliceResult>(slice(size, after));
		return result;
	});
}

/** Deletes an audit trail's lines older than `olderThanDays`, in slices; says how many went. */
export async function purgeTrail(
	store: Store,
	trail: 'pause_events' | 'drill_events',
	olderThanDays: number,
	slices: Readonly<Slices> = DEFAULT_SLICES,
): Promise<number> {
	return await deleteInSlices(
		store,
		(limit) => purgeTrailSql(store, { trail, olderThanDays, limit }),
		slices,
	);
}
