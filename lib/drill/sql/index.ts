import type { SqlQuery, Store } from '../../store';

/**
 * The drill's statements. Every change of a drill writes its audit event in the same statement,
 * so the trail never misses a change that committed.
 */

/** Starts (or restarts) a drill: on until `minutes` from now, nothing armed. */
export const startDrillSql = (
	store: Store,
	input: { integration: string; actor: string; reason: string | null; minutes: number },
): SqlQuery => ({
	text: `
WITH started AS (
	INSERT INTO ${store.table('drills')} (integration, started_by, reason, started_at, expires_at)
	VALUES ($1, $2, $3, now(), now() + make_interval(mins => $4))
	ON CONFLICT (integration) DO UPDATE SET started_by = EXCLUDED.started_by, reason = EXCLUDED.reason,
		started_at = now(), expires_at = EXCLUDED.expires_at, timeout_armed = false, armed_at = NULL,
		fired_at = NULL, fired_scope = NULL, fired_key = NULL, fired_execution = NULL
	RETURNING *
), logged AS (
	INSERT INTO ${store.table('drill_events')} (integration, action, actor, reason)
	SELECT integration, 'start', started_by, reason || ' (until ' || to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC)' FROM started
)
SELECT * FROM started`,
	values: [input.integration, input.actor, input.reason, input.minutes],
});

/** Ends a drill now, disarming what it armed; a drill already over is left as it ended. */
export const stopDrillSql = (
	store: Store,
	input: { integration: string; actor: string; reason: string | null },
): SqlQuery => ({
	text: `
WITH stopped AS (
	UPDATE ${store.table('drills')} SET expires_at = now(), timeout_armed = false
	WHERE integration = $1 AND expires_at > now()
	RETURNING *
), logged AS (
	INSERT INTO ${store.table('drill_events')} (integration, action, actor, reason)
	SELECT integration, 'stop', $2, $3 FROM stopped
)
SELECT * FROM stopped`,
	values: [input.integration, input.actor, input.reason],
});

/**
 * Arms the forced timeout of a drill that is on, for one `event` and `seconds`: the next
 * committed write of that event fires it.
 */
export const armTimeoutSql = (
	store: Store,
	input: { integration: string; actor: string; reason: string; event: string; seconds: number },
): SqlQuery => ({
	text: `
WITH armed AS (
	UPDATE ${store.table('drills')} SET timeout_armed = true, armed_at = now(), armed_for = $4,
		armed_until = now() + make_interval(secs => $5),
		fired_at = NULL, fired_scope = NULL, fired_key = NULL, fired_execution = NULL
	WHERE integration = $1 AND expires_at > now()
	RETURNING *
), logged AS (
	INSERT INTO ${store.table('drill_events')} (integration, action, actor, reason)
	SELECT integration, 'arm_timeout', $2, $3 FROM armed
)
SELECT * FROM armed`,
	values: [input.integration, input.actor, input.reason, input.event, input.seconds],
});

/**
 * Fires the armed timeout for one write of the drill's event whose target answered a success: of
 * two writes that race for it, one takes it (the row lock); a drill that expired or an arming
 * past its end fires nothing, and a write of another event (by its `key` and `businessId`) never
 * takes it.
 */
export const fireTimeoutSql = (
	store: Store,
	input: {
		integration: string;
		scope: string;
		key: string;
		executionId: string | null;
		businessId: string | null;
	},
): SqlQuery => ({
	text: `
WITH fired AS (
	UPDATE ${store.table('drills')} SET timeout_armed = false, fired_at = now(),
		fired_scope = $2, fired_key = $3, fired_execution = $4
	WHERE integration = $1 AND timeout_armed AND expires_at > now() AND armed_until > now()
		AND (strpos($3, armed_for) > 0 OR armed_for = $5)
	RETURNING *
), logged AS (
	INSERT INTO ${store.table('drill_events')} (integration, action, actor, reason)
	SELECT integration, 'fire_timeout', 'Idempotent HTTP Write', 'discarded the answer of key ' || $3 || ' (execution ' || coalesce($4, '?') || ')' FROM fired
)
SELECT * FROM fired`,
	values: [input.integration, input.scope, input.key, input.executionId, input.businessId],
});

export const drillSql = (store: Store, input: { integration: string }): SqlQuery => ({
	text: `
SELECT *, expires_at > now() AS active FROM ${store.table('drills')} WHERE integration = $1`,
	values: [input.integration],
});

/** Drills on now, and those that ended in the last day (the console shows both). */
export const drillsSql = (store: Store): SqlQuery => ({
	text: `
SELECT *, expires_at > now() AS active FROM ${store.table('drills')}
WHERE expires_at > now() - interval '1 day' ORDER BY expires_at > now() DESC, integration`,
	values: [],
});

export const drillEventsSql = (
	store: Store,
	input: { integration: string | null; limit: number },
): SqlQuery => ({
	text: `
SELECT integration, action, actor, reason, at FROM ${store.table('drill_events')}
WHERE ($1::text IS NULL OR integration = $1) ORDER BY id DESC LIMIT $2`,
	values: [input.integration, input.limit],
});

/**
 * The writes a drill's event led to: records created `since` whose key or business ID carries
 * the `event`'s value, or that an execution which claimed the event made.
 */
export const eventWritesSql = (store: Store, input: { event: string; since: Date }): SqlQuery => ({
	text: `
SELECT scope, key, fingerprint, status, attempts, last_error, response_status, execution_id, node
FROM ${store.table('idempotency_keys')}
WHERE created_at >= $2 AND (strpos(key, $1) > 0 OR business_id = $1 OR execution_id IN (
	SELECT execution_id FROM ${store.table('processed_events')} WHERE event_id = $1 AND execution_id IS NOT NULL
))
ORDER BY created_at, scope, key`,
	values: [input.event, input.since],
});

/** The open or replayed letters a drill's `event` led to, parked `since`. */
export const eventLettersSql = (store: Store, input: { event: string; since: Date }): SqlQuery => ({
	text: `
SELECT id, status, step, error_class, error_message, attempts, integration, generation
FROM ${store.table('dead_letters')}
WHERE parked_at >= $2 AND (strpos(item_key, $1) > 0 OR strpos(coalesce(idempotency_key, ''), $1) > 0 OR business_id = $1
	OR strpos(payload::text, $1) > 0)
ORDER BY id`,
	values: [input.event, input.since],
});

export const keyRecordSql = (
	store: Store,
	input: { scope: string | null; key: string | null },
): SqlQuery => ({
	text: `
SELECT scope, key, fingerprint, status, attempts, last_error, response_status, execution_id, node
FROM ${store.table('idempotency_keys')} WHERE scope = $1 AND key = $2`,
	values: [input.scope, input.key],
});

/**
 * A drill's fix of a parked item: the payload with the field it removed put back, and the item
 * set to replay, with the audit event, only while the letter is still where the drill left it.
 */
export const fixAndReplaySql = (
	store: Store,
	input: { id: string; payload: unknown; fromStatuses: string[]; actor: string; reason: string },
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT id, status FROM ${store.table('dead_letters')} WHERE id = $1 AND status = ANY($3::text[]) FOR UPDATE
), changed AS (
	UPDATE ${store.table('dead_letters')} d SET payload = $2::json, status = 'replay_requested',
		generation = d.generation + 1, taken_by = NULL, hold_reason = NULL, updated_at = now(), closed_at = NULL
	FROM target t WHERE d.id = t.id
	RETURNING d.id, t.status AS from_status
), logged AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $4, from_status, 'replay_requested', $5 FROM changed
)
SELECT id FROM changed`,
	values: [input.id, JSON.stringify(input.payload), input.fromStatuses, input.actor, input.reason],
});

export const letterSql = (store: Store, input: { id: string }): SqlQuery => ({
	text: `
SELECT id, status, payload, generation FROM ${store.table('dead_letters')} WHERE id = $1`,
	values: [input.id],
});

/** Disarms a timeout this run armed (for `event`) that did not fire: nothing else may take it. */
export const disarmTimeoutSql = (
	store: Store,
	input: { integration: string; actor: string; reason: string; event: string },
): SqlQuery => ({
	text: `
WITH disarmed AS (
	UPDATE ${store.table('drills')} SET timeout_armed = false
	WHERE integration = $1 AND timeout_armed AND armed_for = $4
	RETURNING integration
), logged AS (
	INSERT INTO ${store.table('drill_events')} (integration, action, actor, reason)
	SELECT integration, 'disarm_timeout', $2, $3 FROM disarmed
)
SELECT integration FROM disarmed`,
	values: [input.integration, input.actor, input.reason, input.event],
});

export const storeNowSql = (): SqlQuery => ({
	text: 'SELECT clock_timestamp() AS now',
	values: [],
});
