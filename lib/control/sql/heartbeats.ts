import type { SqlQuery, Store } from '../../store';
import type { HeartbeatState } from '../heartbeats';

/**
 * Records a beat of heartbeat `name` and the schedule it promises (`periodSeconds` or null, `cron`
 * or null, `graceSeconds`), creating the heartbeat on its first beat. Returns the row with the
 * database's clock, which every state is judged by.
 */
export const beatSql = (
	store: Store,
	input: { name: string; periodSeconds: number | null; cron: string | null; graceSeconds: number },
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('heartbeats')} AS h (name, period_seconds, cron, grace_seconds, last_beat_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (name) DO UPDATE SET period_seconds = EXCLUDED.period_seconds, cron = EXCLUDED.cron,
	grace_seconds = EXCLUDED.grace_seconds, last_beat_at = now(), beats = h.beats + 1
RETURNING name, period_seconds, cron, grace_seconds, last_beat_at, now() AS db_now`,
	values: [input.name, input.periodSeconds, input.cron, input.graceSeconds],
});

/** The heartbeats named in `names` (null: all), with what was last reported of each and the clock. */
export const heartbeatsSql = (store: Store, input: { names: string[] | null }): SqlQuery => ({
	text: `
SELECT name, period_seconds, cron, grace_seconds, last_beat_at, reported_state, now() AS db_now
FROM ${store.table('heartbeats')} WHERE ($1::text[] IS NULL OR name = ANY($1)) ORDER BY name`,
	values: [input.names],
});

/**
 * Records that heartbeat `name`'s `state` was reported, only while the recorded state is still
 * `previousState`: of concurrent checks that saw the same change, one wins (gets the row back)
 * and reports it.
 */
export const reportHeartbeatSql = (
	store: Store,
	input: { name: string; state: HeartbeatState; previousState: HeartbeatState },
): SqlQuery => ({
	text: `
UPDATE ${store.table('heartbeats')} SET reported_state = $2, reported_at = now()
WHERE name = $1 AND reported_state = $3 RETURNING name`,
	values: [input.name, input.state, input.previousState],
});
