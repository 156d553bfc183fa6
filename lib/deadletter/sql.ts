import type { Store } from '../store';

/**
 * The SQL of the dead-letter store, one named builder per statement. Values are bound; the
 * only identifier spliced in is the validated, quoted schema name.
 */

/**
 * Parks a batch in one statement. An item that is already open (same workflow, step and item
 * key) is updated in place: one more failure, the newest error, the latest attempt count; a
 * record a replay had taken goes back to `new` (the replay failed), with its audit event. New
 * rows get their first audit event in the same statement.
 *
 * Holds: while the item's integration is paused the record is held for the pause. The pause row
 * is locked (FOR SHARE) for the statement, so a resume either waits for this park and then
 * releases the new held record, or commits first and this park sees the integration running. A
 * hold asked for by an open breaker stays a hold only while the breaker is still open; a hold
 * whose cause ended before the record was written goes straight to replay (nothing was sent).
 */
export const parkSql = (store: Store): string => `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(
		ord int, workflow_id text, workflow_name text, execution_id text, step text, item_index int,
		item_key text, idempotency_key text, run_link text, integration text, error_class text,
		error_message text, error_status int, attempts int, already_happened text, impact text,
		owner text, severity text, status text, hold_reason text, payload json, retry_after timestamptz,
		retention_days int, attempt_history jsonb, source_version text, steps jsonb)
), paused AS (
	SELECT p.name FROM ${store.table('pauses')} p
	WHERE p.scope = 'integration' AND p.paused AND p.name IN (SELECT integration FROM input)
	FOR SHARE
), open_breakers AS (
	SELECT b.integration FROM ${store.table('breakers')} b
	WHERE b.open_until > now() AND b.integration IN (SELECT integration FROM input)
), decided AS (
	SELECT input.*,
	       CASE WHEN input.integration IN (SELECT name FROM paused) THEN 'pause'
	            WHEN input.status = 'held' AND input.hold_reason = 'breaker'
	                 AND input.integration IN (SELECT integration FROM open_breakers) THEN 'breaker' END AS hold
	FROM input
), parked AS (
	INSERT INTO ${store.table('dead_letters')} AS d (
		workflow_id, workflow_name, execution_id, step, item_index, item_key, idempotency_key, run_link,
		integration, error_class, error_message, error_status, attempts, already_happened, impact, owner,
		severity, status, hold_reason, payload, retry_after, expires_at, attempt_history, source_version, steps)
	SELECT workflow_id, workflow_name, execution_id, step, item_index, item_key, idempotency_key, run_link,
	       integration, error_class, error_message, error_status, coalesce(attempts, 1), already_happened, impact, owner,
	       coalesce(severity, 'normal'),
	       CASE WHEN hold IS NOT NULL THEN 'held' WHEN status = 'held' THEN 'replay_requested' ELSE coalesce(status, 'new') END,
	       hold, payload, retry_after, now() + make_interval(days => retention_days), coalesce(attempt_history, '[]'),
	       source_version, coalesce(steps, '[]')
	-- In identity order, the same in every park, so overlapping batches never deadlock.
	FROM decided ORDER BY workflow_id, step, item_key
	ON CONFLICT (workflow_id, step, item_key) WHERE is_open DO UPDATE SET
		failure_count = d.failure_count + 1,
		attempts = EXCLUDED.attempts,
		last_failed_at = now(),
		execution_id = EXCLUDED.execution_id,
		run_link = coalesce(EXCLUDED.run_link, d.run_link),
		-- The latest failure's integration: the one whose resume (or breaker) releases a hold.
		integration = coalesce(EXCLUDED.integration, d.integration),
		error_class = EXCLUDED.error_class,
		error_message = EXCLUDED.error_message,
		error_status = EXCLUDED.error_status,
		already_happened = coalesce(EXCLUDED.already_happened, d.already_happened),
		payload = EXCLUDED.payload,
		retry_after = EXCLUDED.retry_after,
		-- Each delivery's attempts after the earlier ones', the last 50 kept.
		attempt_history = (SELECT coalesce(jsonb_agg(h.e ORDER BY h.i), '[]') FROM jsonb_array_elements(d.attempt_history || EXCLUDED.attempt_history) WITH ORDINALITY AS h(e, i)
		                   WHERE h.i > jsonb_array_length(d.attempt_history || EXCLUDED.attempt_history) - 50),
		source_version = coalesce(EXCLUDED.source_version, d.source_version),
		-- The steps found by the latest park; a park that found none keeps the earlier list.
		steps = CASE WHEN jsonb_array_length(EXCLUDED.steps) > 0 THEN EXCLUDED.steps ELSE d.steps END,
		-- A new record stays new unless it is now held; any other open record takes the new state.
		status = CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN 'new' ELSE EXCLUDED.status END,
		hold_reason = CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN NULL ELSE EXCLUDED.hold_reason END,
		generation = d.generation + CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN 0 ELSE 1 END,
		taken_by = NULL,
		previous_status = d.status,
		updated_at = now()
	RETURNING d.id, d.workflow_id, d.step, d.item_key, d.status, d.previous_status, d.failure_count, (xmax = 0) AS inserted
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT p.id, 'n8n', CASE WHEN NOT p.inserted THEN p.previous_status END, p.status, i.error_message
	FROM parked p
	JOIN input i ON i.workflow_id = p.workflow_id AND i.step = p.step AND i.item_key = p.item_key
	WHERE p.inserted OR p.previous_status IS DISTINCT FROM p.status
)
SELECT p.id, p.status, p.failure_count, p.inserted, i.ord
FROM parked p JOIN input i ON i.workflow_id = p.workflow_id AND i.step = p.step AND i.item_key = p.item_key`;

export const getByIdSql = (store: Store): string => `
SELECT * FROM ${store.table('dead_letters')} WHERE id = ANY($1::bigint[])`;

export const getByKeySql = (store: Store): string => `
SELECT * FROM ${store.table('dead_letters')} WHERE idempotency_key = ANY($1::text[]) ORDER BY parked_at DESC`;

/**
 * The workflow version seen by the newest failure at a step ($1 workflow, $2 step) parked after
 * $3: what a record's own version is compared with.
 */
export const latestSourceVersionSql = (store: Store): string => `
SELECT source_version, last_failed_at FROM ${store.table('dead_letters')}
WHERE workflow_id = $1 AND step = $2 AND source_version IS NOT NULL AND last_failed_at > $3
ORDER BY last_failed_at DESC LIMIT 1`;

/**
 * Evidence in the audit trail ($1 record, $2 actor, $3 what happened): an event that leaves the
 * status as it is (from = to), such as the answer to a compensating request.
 */
export const evidenceSql = (store: Store): string => `
INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
SELECT id, $2, status, status, $3 FROM ${store.table('dead_letters')} WHERE id = $1`;

export const historySql = (store: Store): string => `
SELECT dead_letter_id, at, actor, from_status, to_status, reason
FROM ${store.table('dead_letter_events')} WHERE dead_letter_id = ANY($1::bigint[]) ORDER BY dead_letter_id, id`;

/** Filters are all optional; each NULL parameter switches its condition off. */
const filterWhere = `
WHERE ($1::text[] IS NULL OR status = ANY($1))
  AND ($2::text IS NULL OR workflow_id = $2)
  AND ($3::text IS NULL OR step = $3)
  AND ($4::text IS NULL OR error_class = $4)
  AND ($5::text IS NULL OR owner = $5)
  AND ($6::text IS NULL OR integration = $6)
  AND ($7::timestamptz IS NULL OR parked_at <= $7)
  AND ($8::text IS NULL OR error_message ILIKE '%' || $8 || '%')`;

export const listSql = (store: Store): string => `
SELECT id, workflow_id, workflow_name, execution_id, step, item_index, idempotency_key, run_link, integration,
       error_class, error_message, error_status, attempts, failure_count, already_happened, impact, owner,
       severity, status, first_failed_at, last_failed_at, parked_at, closed_at, retry_after
FROM ${store.table('dead_letters')}${filterWhere}
ORDER BY parked_at DESC, id DESC
LIMIT $9`;

/** How many records match the same filters as List, without a limit. */
export const countSql = (store: Store): string => `
SELECT count(*)::int AS n FROM ${store.table('dead_letters')}${filterWhere}`;

/**
 * Moves the records that `where` selects to status $1 and writes each one's audit event (actor
 * $2, reason $3) in the same statement; the selection's own parameters start at $6. A record
 * moves only from a status in $4 (the allowed transitions into $1) and, when $5 is set, only
 * while it is still at that generation (a take's fence). Every change increments the
 * generation, so an older take can no longer settle it. Returns one row per selected record:
 * its status now and whether it changed.
 */
const statusChangeSql = (store: Store, where: string): string => `
WITH target AS (
	SELECT id, status, generation FROM ${store.table('dead_letters')} WHERE ${where} ORDER BY id FOR UPDATE
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = $1, updated_at = now(), generation = d.generation + 1,
	    taken_by = NULL,
	    hold_reason = CASE WHEN $1 = 'held' THEN d.hold_reason END,
	    closed_at = CASE WHEN $1 IN ('replayed', 'resolved', 'abandoned', 'compensated') THEN now() ELSE NULL END
	FROM target t
	WHERE d.id = t.id AND t.status = ANY($4::text[]) AND ($5::bigint IS NULL OR t.generation = $5)
	RETURNING d.id, t.status AS from_status, d.status AS to_status, d.generation
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $2, from_status, to_status, $3 FROM changed
)
SELECT t.id, coalesce(c.to_status, t.status) AS status, t.status AS from_status, c.id IS NOT NULL AS changed,
       coalesce(c.generation, t.generation) AS generation
FROM target t LEFT JOIN changed c ON c.id = t.id`;

/** Records by id ($6); ids that do not exist are simply not in the result. */
export const updateStatusSql = (store: Store): string =>
	statusChangeSql(store, 'id = ANY($6::bigint[])');

/**
 * The open records of items that have now succeeded (a later delivery of key $6, at step $8 of
 * workflow $7). Only records waiting for a person or a resume: one taken by the Replay workflow or
 * an operator is theirs to close. A conflict stays open: the key succeeded with another request
 * (or against another version) than the parked one, and only a person can say which is right.
 */
export const closeSucceededSql = (store: Store): string =>
	statusChangeSql(
		store,
		"idempotency_key = ANY($6::text[]) AND workflow_id = $7 AND step = $8 AND status IN ('new', 'held') AND error_class <> 'conflict'",
	);

/**
 * Held records whose breaker no longer holds them: their integration's breaker is closed (or its
 * cool-down over) and the integration is not paused. Of one integration ($6), or of all (null).
 */
export const releaseBreakerHoldsSql = (store: Store): string =>
	statusChangeSql(
		store,
		`status = 'held' AND hold_reason = 'breaker' AND ($6::text IS NULL OR integration = $6)
	AND NOT EXISTS (SELECT 1 FROM ${store.table('breakers')} b WHERE b.integration = dead_letters.integration AND b.open_until > now())
	AND NOT EXISTS (SELECT 1 FROM ${store.table('pauses')} p WHERE p.scope = 'integration' AND p.name = dead_letters.integration AND p.paused)`,
	);

/**
 * Takes up to $3 records asked to be replayed for one replay run ($1, the taker; $2 the reason;
 * $4 an optional workflow), atomically: two overlapping runs never take one record. A record
 * another run took more than $5 minutes ago without settling it (that run died) is taken again.
 * Each taken record is being fixed, at a new generation that the run's later status change must
 * present, so a late settle of the dead run changes nothing.
 */
export const takeForReplaySql = (store: Store): string => `
WITH target AS (
	SELECT id, status FROM ${store.table('dead_letters')}
	WHERE (status = 'replay_requested'
	       OR (status = 'being_fixed' AND taken_by IS NOT NULL AND updated_at < now() - make_interval(mins => $5)))
	  AND ($4::text IS NULL OR workflow_id = $4)
	ORDER BY updated_at, id
	LIMIT $3
	FOR UPDATE SKIP LOCKED
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'being_fixed', updated_at = now(), generation = d.generation + 1, taken_by = $1
	FROM target t
	WHERE d.id = t.id
	RETURNING d.*, t.status AS from_status
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $1, from_status, 'being_fixed',
	       CASE WHEN from_status = 'being_fixed' THEN $2 || ' (an earlier replay run did not finish)' ELSE $2 END
	FROM changed
)
SELECT * FROM changed ORDER BY updated_at, id`;

/** Held records (their integration paused or its breaker open), counted per integration. */
export const heldByIntegrationSql = (store: Store): string => `
SELECT coalesce(integration, '') AS integration, count(*)::int AS held
FROM ${store.table('dead_letters')} WHERE status = 'held' GROUP BY 1 ORDER BY 1`;

/**
 * Removes closed records past retention (open and held ones are never purged), one slice of $1;
 * their audit events go with them (foreign key cascade). A record an operator or a replay holds
 * is skipped, not waited on.
 */
export const purgeSql = (store: Store): string => `
WITH doomed AS (
	SELECT id FROM ${store.table('dead_letters')} WHERE expires_at < now() AND NOT is_open
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table('dead_letters')} d USING doomed WHERE d.id = doomed.id`;

/** Removes daily stats rollup rows for days more than $1 days ago, one slice of $2. */
export const purgeDailyStatsSql = (store: Store): string => `
WITH doomed AS (
	SELECT day, workflow_id, step, owner, reason FROM ${store.table('dead_letter_daily')}
	WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)
DELETE FROM ${store.table('dead_letter_daily')} s USING doomed d
WHERE (s.day, s.workflow_id, s.step, s.owner, s.reason) = (d.day, d.workflow_id, d.step, d.owner, d.reason)`;

/**
 * Stats in one statement: the open queue from the covering partial index (one pass with
 * grouping sets), history from the daily rollup kept by triggers. Never loads closed rows.
 */
export const statsSql = (store: Store): string => `
WITH open_groups AS (
	SELECT status, workflow_id, step, coalesce(owner, '(no owner)') AS owner, count(*)::int AS n,
	       GROUPING(status, workflow_id, step, coalesce(owner, '(no owner)')) AS grouping_id
	FROM ${store.table('dead_letters')}
	WHERE is_open AND ($2::text IS NULL OR workflow_id = $2)
	GROUP BY GROUPING SETS ((status), (workflow_id), (step), (coalesce(owner, '(no owner)')))
), waits AS (
	SELECT extract(epoch FROM now() - min(parked_at))::float8 AS oldest,
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM now() - parked_at))::float8 AS median
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
	(SELECT coalesce(json_agg(json_build_object('workflow_id', workflow_id, 'open', n) ORDER BY n DESC, workflow_id), '[]'::json) FROM open_groups WHERE grouping_id = 11) AS open_by_workflow,
	(SELECT coalesce(json_agg(json_build_object('step', step, 'open', n) ORDER BY n DESC, step), '[]'::json) FROM open_groups WHERE grouping_id = 13) AS open_by_step,
	(SELECT coalesce(json_agg(json_build_object('owner', owner, 'open', n) ORDER BY n DESC, owner), '[]'::json) FROM open_groups WHERE grouping_id = 14) AS open_by_owner`;
