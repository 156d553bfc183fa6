import { deleteDoomed, type SqlQuery, type Store } from '../../store';

/**
 * Removes closed records past retention (open and held ones are never purged), one slice of
 * `limit`;
 * their audit events go with them (foreign key cascade). A record an operator or a replay holds
 * is skipped, not waited on.
 */
export const purgeSql = (store: Store, input: { limit: number }): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid FROM ${store.table('dead_letters')} WHERE expires_at < now() AND NOT is_open
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('dead_letters'))}`,
	values: [input.limit],
});

/** Removes daily stats rollup rows for days more than `olderThanDays` ago, one slice of `limit`. */
export const purgeDailyStatsSql = (
	store: Store,
	input: { olderThanDays: number; limit: number },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid FROM ${store.table('dead_letter_daily')}
	WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('dead_letter_daily'))}`,
	values: [input.olderThanDays, input.limit],
});
