import type { Store } from '../../store';

/**
 * Records a beat of heartbeat $1 and the schedule it promises ($2 period in seconds or null, $3
 * cron or null, $4 grace in seconds), creating the heartbeat on its first beat. Returns the row
 * with the database's clock, which every state is judged by.
 */
export const beatSql = (store: Store): string => `
INSERT INTO ${store.table('heartbeats')} AS h (name, period_seconds, cron, grace_seconds, last_beat_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (name) DO UPDATE SET period_seconds = EXCLUDED.period_seconds, cron = EXCLUDED.cron,
	grace_seconds = EXCLUDED.grace_seconds, last_beat_at = now(), beats = h.beats + 1
RETURNING name, period_seconds, cron, grace_seconds, last_beat_at, now() AS db_now`;

/** The heartbeats named in $1 (null: all), with what was last reported of each and the clock. */
export const heartbeatsSql = (store: Store): string => `
SELECT name, period_seconds, cron, grace_seconds, last_beat_at, reported_state, now() AS db_now
FROM ${store.table('heartbeats')} WHERE ($1::text[] IS NULL OR name = ANY($1)) ORDER BY name`;

/**
 * Records that heartbeat $1's state $2 was reported, only while the recorded state is still $3:
 * of concurrent checks that saw the same change, one wins (gets the row back) and reports it.
 */
export const reportHeartbeatSql = (store: Store): string => `
UPDATE ${store.table('heartbeats')} SET reported_state = $2, reported_at = now()
WHERE name = $1 AND reported_state = $3 RETURNING name`;
