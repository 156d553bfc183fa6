import { afterSql, deleteDoomed, type SqlQuery, type Store } from '../../store';

/**
 * Removes closed records past retention (open and held ones are never purged), one slice of
 * `limit`;
 * their audit events go with them (foreign key cascade). A record an operator or a replay holds
 * is skipped, not waited on.
 */
export const purgeSql = (
	store: Store,
	input: { limit: number; after?: string | null },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid, expires_at AS at FROM ${store.table('dead_letters')}
	WHERE expires_at < now() AND ${afterSql('expires_at', 2, 'timestamptz')} AND NOT is_open
	ORDER BY expires_at
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('dead_letters'), true)}`,
	values: [input.limit, input.after ?? null],
});

/**
 * Removes daily stats rollup rows for days more than `olderThanDays` ago, one slice of `limit`.
 * What they counted as parked is carried, by workflow and step, in the same statement: the
 * parked counter (reliability_dead_letters_parked_total) never goes down.
 */
export const purgeDailyStatsSql = (
	store: Store,
	input: { olderThanDays: number; limit: number; after?: string | null },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid, day AS at, workflow_id, step, parked FROM ${store.table('dead_letter_daily')}
	WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int AND ${afterSql('day', 3, 'date')}
	ORDER BY day
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), carried AS (
	INSERT INTO ${store.table('dead_letter_parked_carried')} AS c (workflow_id, step, parked)
	SELECT workflow_id, step, sum(parked) FROM doomed GROUP BY 1, 2 ORDER BY 1, 2
	ON CONFLICT (workflow_id, step) DO UPDATE SET parked = c.parked + EXCLUDED.parked
	RETURNING 1
)${deleteDoomed(store.table('dead_letter_daily'), true)}`,
	values: [input.olderThanDays, input.limit, input.after ?? null],
});
