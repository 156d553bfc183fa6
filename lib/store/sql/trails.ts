import { deleteDoomed } from '../sliceSql';
import type { SqlQuery, Store } from '../store';

/**
 * One slice (`limit` rows) of an audit trail's lines older than `olderThanDays`, skipping rows
 * another purge holds. The `trail` is the pause history or the fire drill's trail, whose current
 * state lives in a table of its own (pauses, drills) and is never purged.
 */
export const purgeTrailSql = (
	store: Store,
	input: { trail: 'pause_events' | 'drill_events'; olderThanDays: number; limit: number },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid FROM ${store.table(input.trail)} WHERE at < now() - make_interval(days => $1)
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table(input.trail))}`,
	values: [input.olderThanDays, input.limit],
});
