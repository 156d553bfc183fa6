import type { SqlQuery, Store } from '../../store';

/**
 * Open dead letters counted by workflow, step, reason and status, with the age of the oldest of
 * each group in seconds (the database's clock).
 */
export const openDeadLettersSql = (store: Store): SqlQuery => ({
	text: `
SELECT workflow_id, coalesce(workflow_name, '') AS workflow_name, step, error_class, status, count(*)::int AS n,
       extract(epoch FROM now() - min(parked_at))::float8 AS oldest_seconds
FROM ${store.table('dead_letters')} WHERE is_open
GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5`,
	values: [],
});

// The daily rollup keeps purged records counted and moves a record between days or reasons
// without changing its workflow and step, and the days Housekeeping purges are carried, so
// these sums never go down: a counter.
export const parkedTotalsSql = (store: Store): SqlQuery => ({
	text: `
SELECT workflow_id, step, sum(parked)::bigint AS n FROM (
	SELECT workflow_id, step, parked FROM ${store.table('dead_letter_daily')}
	UNION ALL
	SELECT workflow_id, step, parked FROM ${store.table('dead_letter_parked_carried')}
) counted
GROUP BY 1, 2 HAVING sum(parked) > 0 ORDER BY 1, 2`,
	values: [],
});
