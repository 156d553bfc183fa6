import { LOCK_ORDER } from '../../deadletter/sql/identity';
import type { SqlQuery, Store } from '../../store';
import type { PauseScope } from '../pauses';

/**
 * Pauses or resumes (`paused`) the integration or workflow (`scope`, `name`), by `actor` for
 * `reason`, and writes the change's event in the same statement, so the trail never misses one.
 */
export const setPauseSql = (
	store: Store,
	input: { scope: PauseScope; name: string; paused: boolean; actor: string; reason: string | null },
): SqlQuery => ({
	text: `
WITH changed AS (
	INSERT INTO ${store.table('pauses')} (scope, name, paused, changed_by, reason, changed_at)
	VALUES ($1, $2, $3, $4, $5, now())
	ON CONFLICT (scope, name) DO UPDATE SET paused = EXCLUDED.paused, changed_by = EXCLUDED.changed_by, reason = EXCLUDED.reason, changed_at = now()
	RETURNING scope, name, paused, changed_by, reason, changed_at
), logged AS (
	INSERT INTO ${store.table('pause_events')} (scope, name, paused, actor, reason) SELECT scope, name, paused, changed_by, reason FROM changed
)
SELECT * FROM changed`,
	values: [input.scope, input.name, input.paused, input.actor, input.reason],
});

/**
 * Held items of a resumed `integration` go to replay_requested, with their audit events (`actor`,
 * `reason`). Returns how many were released.
 */
export const releaseHeldSql = (
	store: Store,
	input: { integration: string; actor: string; reason: string },
): SqlQuery => ({
	text: `
WITH target AS (
	-- Locked in the park's order (its identity), so a resume and a park or a settle never deadlock.
	SELECT id FROM ${store.table('dead_letters')} WHERE integration = $1 AND status = 'held'
	ORDER BY ${LOCK_ORDER} FOR UPDATE
), released AS (
	UPDATE ${store.table('dead_letters')} d SET status = 'replay_requested', updated_at = now()
	FROM target t WHERE d.id = t.id AND d.status = 'held'
	RETURNING d.id
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $2, 'held', 'replay_requested', $3 FROM released
)
SELECT count(*)::int AS released FROM released`,
	values: [input.integration, input.actor, input.reason],
});

/** The pauses, each filter applied when given (not null): `scope`, `name`, `paused` or resumed. */
export const pausesSql = (
	store: Store,
	input: { scope: string | null; name: string | null; paused: boolean | null },
): SqlQuery => ({
	text: `
SELECT scope, name, paused, changed_by, reason, changed_at FROM ${store.table('pauses')}
WHERE ($1::text IS NULL OR scope = $1) AND ($2::text IS NULL OR name = $2) AND ($3::boolean IS NULL OR paused = $3)
ORDER BY scope, name`,
	values: [input.scope, input.name, input.paused],
});
