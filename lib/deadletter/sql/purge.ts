import type { SqlQuery, Store } from '../../store';

/**
 * Removes closed records past retention (open and held ones are never purged), one slice of
 * `limit`;
 * their audit events go with them (foreign key cascade). A record an operator or a replay holds
 * is skipped, not waited on.
 */
export const purgeSql = (store: Store, input: { limit: number }): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT id FROM ${store.table('dead_letters')} WHERE expires_at < now() AND NOT is_open
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table('dead_letters')} d USING doomed WHERE d.id = doomed.id`,
	values: [input.limit],
});

/** Removes daily stats rollup rows for days more than `olderThanDays` ago, one slice of `limit`. */
export const purgeDailyStatsSql = (
	store: Store,
	input: { olderThanDays: number; limit: number },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT day, workflow_id, step, owner, reason FROM ${store.table('dead_letter_daily')}
	WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table('dead_letter_daily')} s USING doomed d
WHERE (s.day, s.workflow_id, s.step, s.owner, s.reason) = (d.day, d.workflow_id, d.step, d.owner, d.reason)`,
	values: [input.olderThanDays, input.limit],
});
