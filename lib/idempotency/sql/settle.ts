import type { SqlQuery, Store } from '../../store';
import type { Settlement } from '../runState';
import { lockedInKeyOrder } from './locks';

/**
 * Records outcomes in one statement. A record is settled when its owner still holds it
 * (same generation, in progress), or when a superseded owner proves an unknown record's effect
 * exists (a success with the same request). Every other outcome is kept as an observation in
 * the record's history and reported back, never dropped silently. The history keeps the last
 * 50 entries.
 *
 * A record settled as succeeded closes, in the same statement, the open dead letters an earlier
 * delivery of its key left at this step (`workflowId`, `step`) as replayed, each with its audit
 * event (`actor`, `reason`): the rules of closeSucceededSql, with the key row held locked by
 * this statement's own settle, so no renewal of the key can come between the two. The letters
 * are locked in the park's order (workflow, step, item key), so a settle and a park of the same
 * keys never wait on each other in a circle.
 *
 * A success also ends the streak of the integration's circuit breaker (`breakerIntegration`, null
 * without one), as it happens rather than when the run ends: the row is written only when it has
 * a streak or is open, so the healthy path costs the breaker no statement.
 */
export const settleKeysSql = (
	store: Store,
	input: {
		settlements: Settlement[];
		retentionDays: number;
		workflowId: string;
		step: string;
		actor: string;
		reason: string;
		breakerIntegration: string | null;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(scope text, key text, generation bigint, fingerprint text,
		outcome text, response_status int, response_headers json, response_body text, response_truncated boolean,
		last_error text, history jsonb, item_ref text, compensation jsonb)
), ${lockedInKeyOrder(store)}, settled AS (
	UPDATE ${store.table('idempotency_keys')} k SET
		status = CASE input.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'failed' THEN 'failed' ELSE 'unknown' END,
		lease_until = now(),
		response_status = input.response_status,
		response_headers = input.response_headers,
		response_body = input.response_body,
		response_truncated = coalesce(input.response_truncated, false),
		last_error = input.last_error,
		item_ref = input.item_ref,
		compensation = input.compensation,
		completed_at = CASE WHEN input.outcome = 'succeeded' THEN now() END,
		expires_at = greatest(k.expires_at, now() + make_interval(days => $2)),
		updated_at = now(),
		history = (SELECT coalesce(jsonb_agg(h.e ORDER BY h.i), '[]') FROM jsonb_array_elements(k.history || coalesce(input.history, '[]')) WITH ORDINALITY AS h(e, i)
		           WHERE h.i > jsonb_array_length(k.history || coalesce(input.history, '[]')) - 50)
	FROM input JOIN locked USING (scope, key)
	WHERE k.scope = input.scope AND k.key = input.key
	  AND ((k.generation = input.generation AND k.status = 'in_progress')
	       OR (input.outcome = 'succeeded' AND k.status = 'unknown' AND k.fingerprint = input.fingerprint))
	RETURNING k.scope, k.key
), observed AS (
	UPDATE ${store.table('idempotency_keys')} k SET
		history = (SELECT coalesce(jsonb_agg(h.e ORDER BY h.i), '[]') FROM jsonb_array_elements(k.history || coalesce(input.history, '[]')) WITH ORDINALITY AS h(e, i)
		           WHERE h.i > jsonb_array_length(k.history || coalesce(input.history, '[]')) - 50)
	FROM input JOIN locked USING (scope, key)
	WHERE k.scope = input.scope AND k.key = input.key
	  AND NOT EXISTS (SELECT 1 FROM settled s WHERE s.scope = input.scope AND s.key = input.key)
	RETURNING k.scope, k.key, k.execution_id
), closing AS (
	SELECT d.id, d.status FROM ${store.table('dead_letters')} d
	WHERE d.idempotency_key IN (SELECT s.key FROM settled s JOIN input USING (scope, key) WHERE input.outcome = 'succeeded')
	  AND d.workflow_id = $3 AND d.step = $4 AND d.status IN ('new', 'held', 'replay_requested') AND d.error_class <> 'conflict'
	ORDER BY d.workflow_id, d.step, d.item_key FOR UPDATE
), closed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'replayed', updated_at = now(), generation = d.generation + 1, taken_by = NULL,
	    hold_reason = NULL, closed_at = now()
	FROM closing c WHERE d.id = c.id
	RETURNING d.id, c.status AS from_status
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $5, from_status, 'replayed', $6 FROM closed
), streak_ended AS (
	UPDATE ${store.table('breakers')} b SET consecutive_failures = 0, open_until = NULL, updated_at = now()
	WHERE b.integration = $7 AND (b.consecutive_failures > 0 OR b.open_until IS NOT NULL)
	  AND EXISTS (SELECT 1 FROM settled s JOIN input USING (scope, key) WHERE input.outcome = 'succeeded')
)
SELECT scope, key, true AS settled, NULL AS owner FROM settled
UNION ALL
SELECT scope, key, false, execution_id FROM observed`,
	values: [
		JSON.stringify(input.settlements),
		input.retentionDays,
		input.workflowId,
		input.step,
		input.actor,
		input.reason,
		input.breakerIntegration,
	],
});
