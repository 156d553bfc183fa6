import type { Store } from '../../store';

/**
 * The SQL of alert issues, one named builder per statement. Every value is bound; the only
 * identifier spliced in is the validated, quoted schema name.
 *
 * Opening, joining and resolving an issue of a cause happen under a transaction-level advisory
 * lock on the cause (taken in the causes' order), so a Notify that adds an item and a Sweep that
 * finds the issue empty never both decide: either the item joins before the issue resolves, or
 * the issue resolves first and the item opens a new one.
 */

/** Locks the causes $1, in order, for the rest of the transaction. */
export const lockCausesSql = `
SELECT count(pg_advisory_xact_lock(k)) FROM (
	SELECT hashtextextended('n8n-reliability:alert-cause:' || c, 0) AS k FROM unnest($1::text[]) AS c ORDER BY 1
) AS locks`;

/**
 * Opens an issue for each cause of $1 that has none open (its first item's facts), and returns
 * every open issue of those causes with whether it opened now.
 */
export const openIssuesSql = (store: Store): string => `
WITH input AS (
	SELECT DISTINCT ON (cause) * FROM json_to_recordset($1::json) AS t(ord int, cause text, route text,
		impact text, owner text, workflow_id text, workflow_name text, step text, integration text,
		error_class text, message text, headline text, text text, item text, update_interval_seconds int,
		ceiling int, link_base text)
	ORDER BY cause, ord
), opened AS (
	INSERT INTO ${store.table('alert_issues')} (cause, route, impact, owner, workflow_id, workflow_name, step,
		integration, error_class, message, headline, first_text, first_item, last_item, update_interval_seconds,
		ceiling, link_base)
	SELECT cause, route, impact, owner, workflow_id, workflow_name, step, integration, error_class, message, headline,
	       text, item, item, update_interval_seconds, ceiling, link_base
	FROM input
	WHERE NOT EXISTS (SELECT 1 FROM ${store.table('alert_issues')} i WHERE i.cause = input.cause AND i.status = 'open')
	RETURNING id, cause
)
-- The statement's snapshot does not see the rows it inserts: the opened ones come from RETURNING.
SELECT i.id, i.cause, false AS opened FROM ${store.table('alert_issues')} i
WHERE i.status = 'open' AND i.cause IN (SELECT cause FROM input)
UNION ALL
SELECT id, cause, true FROM opened`;

/**
 * The facts of the dead letters $1 an alert is about, as parked: an item out of a write's Failed
 * output or out of Park carries its record's ID but not its owner, integration or impact.
 */
export const alertLettersSql = (store: Store): string => `
SELECT id, workflow_id, workflow_name, execution_id, step, item_index, idempotency_key, run_link, integration,
       error_class, error_message, error_status, attempts, already_happened, impact, owner, severity,
       attempt_history, retry_after, is_open
FROM ${store.table('dead_letters')} WHERE id = ANY($1::bigint[])`;

/** Puts each dead letter of $1 (id, issue) in its cause's open issue. */
export const assignLettersSql = (store: Store): string => `
UPDATE ${store.table('dead_letters')} d SET issue_id = input.issue
FROM json_to_recordset($1::json) AS input(id bigint, issue bigint)
WHERE d.id = input.id AND d.issue_id IS DISTINCT FROM input.issue`;

/**
 * Counts the items of issues $1 again (all, and open ones) and keeps the latest item $2 names
 * per issue (json: issue -> item); returns each issue as it now stands.
 */
export const recountIssuesSql = (store: Store): string => `
WITH counted AS (
	SELECT i.id, count(d.id)::int AS items, (count(d.id) FILTER (WHERE d.is_open))::int AS open_items
	FROM ${store.table('alert_issues')} i
	LEFT JOIN ${store.table('dead_letters')} d ON d.issue_id = i.id
	WHERE i.id = ANY($1::bigint[])
	GROUP BY i.id
)
UPDATE ${store.table('alert_issues')} i SET items = counted.items, open_items = counted.open_items,
	last_item = coalesce($2::json ->> i.id::text, i.last_item),
	last_parked_at = CASE WHEN $2::json ->> i.id::text IS NULL THEN i.last_parked_at ELSE now() END
FROM counted WHERE i.id = counted.id
RETURNING i.*`;

/** Marks issue $1 as notified of $2 items now. */
export const markNotifiedSql = (store: Store): string => `
UPDATE ${store.table('alert_issues')} SET notified_items = $2, notified_at = now() WHERE id = $1`;

/** Open issues none of whose items is open any more (replayed, resolved, abandoned or purged). */
export const emptyIssuesSql = (store: Store): string => `
SELECT i.id, i.cause FROM ${store.table('alert_issues')} i
WHERE i.status = 'open'
  AND NOT EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.issue_id = i.id AND d.is_open)
ORDER BY i.id LIMIT $1`;

/** Resolves issue $1 if, under its cause's lock, it is still open and empty. */
export const resolveIssueSql = (store: Store): string => `
UPDATE ${store.table('alert_issues')} i SET status = 'resolved', resolved_at = now(), open_items = 0
WHERE i.id = $1 AND i.status = 'open'
  AND NOT EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.issue_id = i.id AND d.is_open)
RETURNING i.*`;

/** Open issues with items no alert has counted yet, last notified over their interval ago. */
export const dueUpdatesSql = (store: Store): string => `
SELECT id FROM ${store.table('alert_issues')}
WHERE status = 'open' AND route <> 'digest'
  AND notified_at < now() - make_interval(secs => update_interval_seconds)
  AND items > notified_items
ORDER BY id LIMIT $1`;

/** Alerts sent to owner $1 in the last hour (held ones not counted). */
export const sentLastHourSql = (store: Store): string => `
SELECT count(*)::int AS n FROM ${store.table('alert_log')}
WHERE owner = $1 AND action <> 'held' AND at > now() - interval '1 hour'`;

/** Records an alert sent or held back. */
export const logAlertSql = (store: Store): string => `
INSERT INTO ${store.table('alert_log')} (owner, issue_id, action, route) VALUES ($1, $2, $3, $4)`;

/**
 * Owners with alerts held back that no summary has counted, and no summary in the last hour:
 * their held rows are marked summarized, and each owner's count and first held time returned.
 */
export const takeHeldSql = (store: Store): string => `
WITH owners AS (
	SELECT DISTINCT h.owner FROM ${store.table('alert_log')} h
	WHERE h.action = 'held' AND NOT h.summarized
	  AND NOT EXISTS (SELECT 1 FROM ${store.table('alert_log')} s
	                  WHERE s.owner = h.owner AND s.action = 'summary' AND s.at > now() - interval '1 hour')
), taken AS (
	UPDATE ${store.table('alert_log')} h SET summarized = true
	WHERE h.action = 'held' AND NOT h.summarized AND h.owner IN (SELECT owner FROM owners)
	RETURNING h.owner, h.at, h.route
)
SELECT t.owner, count(*)::int AS held, min(t.at) AS since,
       CASE WHEN bool_or(t.route = 'page') THEN 'page' ELSE 'channel' END AS route,
       (SELECT i.link_base FROM ${store.table('alert_issues')} i WHERE i.owner = t.owner AND i.link_base IS NOT NULL
        ORDER BY i.id DESC LIMIT 1) AS link_base
FROM taken t GROUP BY t.owner`;

/** Open issues, newest first, for the console and the digest. */
export const openIssuesListSql = (store: Store): string => `
SELECT * FROM ${store.table('alert_issues')}
WHERE status = 'open' AND ($1::text IS NULL OR route = $1)
ORDER BY last_parked_at DESC, id DESC LIMIT $2`;
