import type { SqlQuery, Store } from '../../store';

/**
 * The SQL of alert issues, one named builder per statement. Every value is bound; the only
 * identifier spliced in is the validated, quoted schema name.
 *
 * Opening, joining and resolving an issue of a cause happen under a transaction-level advisory
 * lock on the cause (taken in the causes' order), so a Notify that adds an item and a Sweep that
 * finds the issue empty never both decide: either the item joins before the issue resolves, or
 * the issue resolves first and the item opens a new one.
 */

/** Locks the `causes`, in order, for the rest of the transaction. */
export const lockCausesSql = (input: { causes: string[] }): SqlQuery => ({
	text: `
SELECT count(pg_advisory_xact_lock(k)) FROM (
	SELECT hashtextextended('n8n-reliability:alert-cause:' || c, 0) AS k FROM unnest($1::text[]) AS c ORDER BY 1
) AS locks`,
	values: [input.causes],
});

/**
 * Opens an issue for each cause of `issues` that has none open (its first item's facts), and returns
 * every open issue of those causes with whether it opened now.
 */
export const openIssuesSql = (
	store: Store,
	input: {
		issues: Array<{
			ord: number;
			cause: string;
			route: string;
			impact: string | null;
			owner: string;
			workflow_id: string | null;
			workflow_name: string | null;
			step: string | null;
			integration: string | null;
			error_class: string | null;
			message: string | null;
			headline: string;
			text: string;
			item: string | null;
			update_interval_seconds: number;
			ceiling: number;
			link_base: string | null;
		}>;
	},
): SqlQuery => ({
	text: `
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
SELECT id, cause, true FROM opened`,
	values: [JSON.stringify(input.issues)],
});

/**
 * The facts of the dead letters `ids` an alert is about, as parked: an item out of a write's Failed
 * output or out of Park carries its record's ID but not its owner, integration or impact.
 */
export const alertLettersSql = (store: Store, input: { ids: string[] }): SqlQuery => ({
	text: `
SELECT id, workflow_id, workflow_name, execution_id, step, item_index, idempotency_key, run_link, integration,
       error_class, error_message, error_status, attempts, already_happened, impact, owner, severity,
       attempt_history, retry_after, is_open
FROM ${store.table('dead_letters')} WHERE id = ANY($1::bigint[])`,
	values: [input.ids],
});

/** Puts each of the dead `letters` (id, issue) in its cause's open issue. */
export const assignLettersSql = (
	store: Store,
	input: { letters: Array<{ id: string; issue: string }> },
): SqlQuery => ({
	text: `
UPDATE ${store.table('dead_letters')} d SET issue_id = input.issue
FROM json_to_recordset($1::json) AS input(id bigint, issue bigint)
WHERE d.id = input.id AND d.issue_id IS DISTINCT FROM input.issue`,
	values: [JSON.stringify(input.letters)],
});

/**
 * Counts the items of issues `issueIds` again (all, and open ones) and keeps the latest item
 * `latestItems` names per issue (issue -> item); returns each issue as it now stands.
 */
export const recountIssuesSql = (
	store: Store,
	input: { issueIds: string[]; latestItems: Record<string, string | null> },
): SqlQuery => ({
	text: `
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
RETURNING i.*`,
	values: [input.issueIds, JSON.stringify(input.latestItems)],
});

/** Marks issue `issueId` as notified of `items` items now. */
export const markNotifiedSql = (
	store: Store,
	input: { issueId: string; items: number },
): SqlQuery => ({
	text: `
UPDATE ${store.table('alert_issues')} SET notified_items = $2, notified_at = now() WHERE id = $1`,
	values: [input.issueId, input.items],
});

/** Open issues none of whose items is open any more (replayed, resolved, abandoned or purged). */
export const emptyIssuesSql = (store: Store, input: { limit: number }): SqlQuery => ({
	text: `
SELECT i.id, i.cause FROM ${store.table('alert_issues')} i
WHERE i.status = 'open'
  AND NOT EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.issue_id = i.id AND d.is_open)
ORDER BY i.id LIMIT $1`,
	values: [input.limit],
});

/** Resolves issue `issueId` if, under its cause's lock, it is still open and empty. */
export const resolveIssueSql = (store: Store, input: { issueId: string }): SqlQuery => ({
	text: `
UPDATE ${store.table('alert_issues')} i SET status = 'resolved', resolved_at = now(), open_items = 0
WHERE i.id = $1 AND i.status = 'open'
  AND NOT EXISTS (SELECT 1 FROM ${store.table('dead_letters')} d WHERE d.issue_id = i.id AND d.is_open)
RETURNING i.*`,
	values: [input.issueId],
});

/** Open issues with items no alert has counted yet, last notified over their interval ago. */
export const dueUpdatesSql = (store: Store, input: { limit: number }): SqlQuery => ({
	text: `
SELECT id FROM ${store.table('alert_issues')}
WHERE status = 'open' AND route <> 'digest'
  AND notified_at < now() - make_interval(secs => update_interval_seconds)
  AND items > notified_items
ORDER BY id LIMIT $1`,
	values: [input.limit],
});

/** Alerts sent to `owner` in the last hour (held ones not counted). */
export const sentLastHourSql = (store: Store, input: { owner: string }): SqlQuery => ({
	text: `
SELECT count(*)::int AS n FROM ${store.table('alert_log')}
WHERE owner = $1 AND action <> 'held' AND at > now() - interval '1 hour'`,
	values: [input.owner],
});

/** Records an alert sent or held back. */
export const logAlertSql = (
	store: Store,
	input: { owner: string; issueId: string | null; action: string; route: string },
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('alert_log')} (owner, issue_id, action, route) VALUES ($1, $2, $3, $4)`,
	values: [input.owner, input.issueId, input.action, input.route],
});

/**
 * Owners with alerts held back that no summary has counted, and no summary in the last hour:
 * their held rows are marked summarized, and each owner's count and first held time returned.
 */
export const takeHeldSql = (store: Store): SqlQuery => ({
	text: `
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
FROM taken t GROUP BY t.owner`,
	values: [],
});

/** Open issues, newest first, for the console and the digest. */
export const openIssuesListSql = (
	store: Store,
	input: { route: 'page' | 'channel' | 'digest' | null; limit: number },
): SqlQuery => ({
	text: `
SELECT * FROM ${store.table('alert_issues')}
WHERE status = 'open' AND ($1::text IS NULL OR route = $1)
ORDER BY last_parked_at DESC, id DESC LIMIT $2`,
	values: [input.route, input.limit],
});
