import type { SqlQuery, Store } from '../../store';
import { OPEN_IDENTITY } from './identity';

/**
 * Parks a batch in one statement. An item that is already open (same workflow, step and item
 * key; for an item's own letter, same workflow and item key at any step: OPEN_IDENTITY_STEP) is
 * updated in place: one more failure, the newest error, the latest attempt count; a
 * record a replay had taken goes back to `new` (the replay failed), with its audit event. New
 * rows get their first audit event in the same statement.
 *
 * Holds: while the item's integration is paused the record is held for the pause (a conflict is
 * never held, by a pause or a breaker: it is for a person whatever the integration does, and a
 * release would only replay it into the same conflict). The pause row
 * is locked (FOR SHARE) for the statement, so a resume either waits for this park and then
 * releases the new held record, or commits first and this park sees the integration running. A
 * hold asked for by an open breaker stays a hold only while the breaker is still open; a hold
 * whose cause ended before the record was written goes straight to replay (nothing was sent).
 */
export const parkSql = (
	store: Store,
	input: { rows: Array<Record<string, unknown>> },
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(
		ord int, workflow_id text, workflow_name text, execution_id text, step text, item_index int,
		item_key text, idempotency_key text, run_link text, integration text, error_class text,
		error_message text, error_status int, attempts int, already_happened text, impact text,
		owner text, severity text, status text, hold_reason text, payload json, retry_after timestamptz,
		retention_days int, attempt_history jsonb, source_version text, steps jsonb, alert_due boolean,
		business_id text)
), paused AS (
	SELECT p.name FROM ${store.table('pauses')} p
	WHERE p.scope = 'integration' AND p.paused AND p.name IN (SELECT integration FROM input)
	FOR SHARE
), open_breakers AS (
	SELECT b.integration FROM ${store.table('breakers')} b
	WHERE b.open_until > now() AND b.integration IN (SELECT integration FROM input)
), decided AS (
	SELECT input.*,
	       CASE WHEN input.error_class = 'conflict' THEN NULL
	            WHEN input.integration IN (SELECT name FROM paused) THEN 'pause'
	            WHEN input.status = 'held' AND input.hold_reason = 'breaker'
	                 AND input.integration IN (SELECT integration FROM open_breakers) THEN 'breaker' END AS hold
	FROM input
), parked AS (
	INSERT INTO ${store.table('dead_letters')} AS d (
		workflow_id, workflow_name, execution_id, step, item_index, item_key, idempotency_key, run_link,
		integration, error_class, error_message, error_status, attempts, already_happened, impact, owner,
		severity, status, hold_reason, payload, retry_after, expires_at, attempt_history, source_version, steps,
		alert_due, business_id)
	SELECT workflow_id, workflow_name, execution_id, step, item_index, item_key, idempotency_key, run_link,
	       integration, error_class, error_message, error_status, coalesce(attempts, 1), already_happened, impact, owner,
	       coalesce(severity, 'normal'),
	       CASE WHEN hold IS NOT NULL THEN 'held' WHEN status = 'held' AND error_class = 'conflict' THEN 'new'
	            WHEN status = 'held' THEN 'replay_requested' ELSE coalesce(status, 'new') END,
	       hold, payload, retry_after, now() + make_interval(days => retention_days), coalesce(attempt_history, '[]'),
	       source_version, coalesce(steps, '[]'), CASE WHEN alert_due THEN now() END, business_id
	-- In identity order, the same in every park, so overlapping batches never deadlock.
	FROM decided ORDER BY ${OPEN_IDENTITY}
	ON CONFLICT (${OPEN_IDENTITY}) WHERE is_open DO UPDATE SET
		failure_count = d.failure_count + 1,
		-- An item's own letter names the step its latest failure was at.
		step = EXCLUDED.step,
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
		business_id = coalesce(EXCLUDED.business_id, d.business_id),
		-- The steps found by the latest park; a park that found none keeps the earlier list.
		steps = CASE WHEN jsonb_array_length(EXCLUDED.steps) > 0 THEN EXCLUDED.steps ELSE d.steps END,
		-- A new record stays new unless it is now held; any other open record takes the new state.
		status = CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN 'new' ELSE EXCLUDED.status END,
		hold_reason = CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN NULL ELSE EXCLUDED.hold_reason END,
		generation = d.generation + CASE WHEN d.status = 'new' AND EXCLUDED.status <> 'held' THEN 0 ELSE 1 END,
		taken_by = NULL,
		-- An alert still due stays due; a park that no alert follows makes one due.
		alert_due = coalesce(d.alert_due, EXCLUDED.alert_due),
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
FROM parked p JOIN input i ON i.workflow_id = p.workflow_id AND i.step = p.step AND i.item_key = p.item_key`,
	values: [JSON.stringify(input.rows)],
});
