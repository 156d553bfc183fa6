import type { SqlQuery, Store } from '../../store';

/**
 * Stats in one statement: the open queue from the covering partial index (one pass with
 * grouping sets), history from the daily rollup kept by triggers. Never loads closed rows.
 */
export const statsSql = (
	store: Store,
	input: { days: number; workflowId: string | null; topReasons: number },
): SqlQuery => ({
	text: `
WITH open_combos AS (
	-- One hash aggregate over the open rows; the four breakdowns then add up its few combinations.
	SELECT status, workflow_id, step, coalesce(owner, '(no owner)') AS owner, count(*)::int AS n
	FROM ${store.table('dead_letters')}
	WHERE is_open AND ($2::text IS NULL OR workflow_id = $2)
	GROUP BY 1, 2, 3, 4
), open_groups AS (
	SELECT status, workflow_id, step, owner, sum(n)::int AS n,
	       GROUPING(status, workflow_id, step, owner) AS grouping_id
	FROM open_combos
	GROUP BY GROUPING SETS ((status), (workflow_id), (step), (owner))
), waits AS (
	-- date_part is float8, so the median sorts doubles rather than numerics (extract's type).
	SELECT extract(epoch FROM now() - min(parked_at))::float8 AS oldest,
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY date_part('epoch', now() - parked_at)) AS median
	FROM ${store.table('dead_letters')}
	WHERE is_open AND status <> 'held' AND ($2::text IS NULL OR workflow_id = $2)
), history AS (
	SELECT * FROM ${store.table('dead_letter_daily')}
	WHERE day > (now() AT TIME ZONE 'UTC')::date - $1::int AND ($2::text IS NULL OR workflow_id = $2)
)
SELECT
	(SELECT coalesce(json_agg(json_build_object('day', to_char(day, 'YYYY-MM-DD'), 'parked', n) ORDER BY day), '[]'::json)
	   FROM (SELECT day, sum(parked)::int AS n FROM history GROUP BY day HAVING sum(parked) > 0) d) AS parked_per_day,
	(SELECT coalesce(json_object_agg(status, n), '{}'::json) FROM open_groups WHERE grouping_id = 7) AS open_by_status,
	(SELECT coalesce(sum(n), 0)::int FROM open_groups WHERE grouping_id = 7) AS open_count,
	(SELECT oldest FROM waits) AS oldest_wait_seconds,
	(SELECT median FROM waits) AS median_wait_seconds,
	(SELECT CASE WHEN sum(closed) > 0 THEN (sum(closed_seconds) / sum(closed))::float8 END FROM history) AS average_resolution_seconds,
	(SELECT coalesce(json_agg(r ORDER BY r.count DESC, r.reason), '[]'::json) FROM (
		SELECT reason, sum(parked)::int AS count FROM history GROUP BY reason HAVING sum(parked) > 0 ORDER BY 2 DESC, 1 LIMIT $3) r) AS top_reasons,
	-- A workflow's name from its open records: the first hundred the open-item index finds, a
	-- bounded read however many are open (looking on until one has a name read every open record
	-- of a workflow whose records carry none: 60 ms at 50,000).
	(SELECT coalesce(json_agg(json_build_object('workflowId', g.workflow_id, 'workflowName',
		(SELECT max(named.workflow_name) FROM (
			SELECT d.workflow_name FROM ${store.table('dead_letters')} d
			WHERE d.is_open AND d.workflow_id = g.workflow_id LIMIT 100) named),
		'open', g.n) ORDER BY g.n DESC, g.workflow_id), '[]'::json) FROM open_groups g WHERE g.grouping_id = 11) AS open_by_workflow,
	(SELECT coalesce(json_agg(json_build_object('step', step, 'open', n) ORDER BY n DESC, step), '[]'::json) FROM open_groups WHERE grouping_id = 13) AS open_by_step,
	(SELECT coalesce(json_agg(json_build_object('owner', owner, 'open', n) ORDER BY n DESC, owner), '[]'::json) FROM open_groups WHERE grouping_id = 14) AS open_by_owner`,
	values: [input.days, input.workflowId, input.topReasons],
});
