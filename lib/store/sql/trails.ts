import type { Store } from '../store';

/**
 * One slice ($2 rows) of an audit trail's lines older than $1 days, skipping rows another purge
 * holds: the pause history and the fire drill's trail, whose current state lives in a table of
 * its own (pauses, drills) and is never purged.
 */
export const purgeTrailSql = (store: Store, trail: 'pause_events' | 'drill_events'): string => `
WITH doomed AS (
	SELECT id FROM ${store.table(trail)} WHERE at < now() - make_interval(days => $1)
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table(trail)} e USING doomed d WHERE e.id = d.id`;
