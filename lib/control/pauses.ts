import { ReliabilityError } from '../errors';
import type { Store } from '../store';

/**
 * Pause and resume of an integration or a workflow, with who and why. While an integration is
 * paused, items parked for it are held; resuming moves its held items to replay_requested, each
 * with an audit event naming who resumed and why.
 */
export const PauseScope = { integration: 'integration', workflow: 'workflow' } as const;
export type PauseScope = (typeof PauseScope)[keyof typeof PauseScope];

class PauseChangeRefused extends ReliabilityError {}

export interface PauseState {
	scope: PauseScope;
	name: string;
	paused: boolean;
	changedBy: string;
	reason: string | null;
	changedAt: Date;
}

const setPauseSql = (store: Store): string => `
WITH changed AS (
	INSERT INTO ${store.table('pauses')} (scope, name, paused, changed_by, reason, changed_at)
	VALUES ($1, $2, $3, $4, $5, now())
	ON CONFLICT (scope, name) DO UPDATE SET paused = EXCLUDED.paused, changed_by = EXCLUDED.changed_by, reason = EXCLUDED.reason, changed_at = now()
	RETURNING scope, name, paused, changed_by, reason, changed_at
), logged AS (
	INSERT INTO ${store.table('pause_events')} (scope, name, paused, actor, reason) SELECT scope, name, paused, changed_by, reason FROM changed
)
SELECT * FROM changed`;

/** Held items of a resumed integration go to replay_requested, with their audit events. */
const releaseHeldSql = (store: Store): string => `
WITH released AS (
	UPDATE ${store.table('dead_letters')} SET status = 'replay_requested', updated_at = now()
	WHERE integration = $1 AND status = 'held'
	RETURNING id
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $2, 'held', 'replay_requested', $3 FROM released
)
SELECT count(*)::int AS released FROM released`;

const getPausesSql = (store: Store): string => `
SELECT scope, name, paused, changed_by, reason, changed_at FROM ${store.table('pauses')}
WHERE ($1::text IS NULL OR scope = $1) AND ($2::text IS NULL OR name = $2) AND ($3::boolean IS NULL OR paused = $3)
ORDER BY scope, name`;

type PauseRow = {
	scope: PauseScope;
	name: string;
	paused: boolean;
	changed_by: string;
	reason: string | null;
	changed_at: Date;
};
const toState = (row: PauseRow): PauseState => ({
	scope: row.scope,
	name: row.name,
	paused: row.paused,
	changedBy: row.changed_by,
	reason: row.reason,
	changedAt: row.changed_at,
});

function check(scope: string, name: string, actor: string): void {
	if (!Object.values(PauseScope).includes(scope as PauseScope))
		throw new PauseChangeRefused(
			`Pause scope "${scope}" is unknown`,
			'Use integration or workflow.',
		);
	if (!name.trim())
		throw new PauseChangeRefused(
			`Pausing or resuming needs the ${scope}'s name`,
			`Set the ${scope} name.`,
		);
	if (!actor.trim())
		throw new PauseChangeRefused(
			`Pausing or resuming ${scope} "${name}" needs an actor`,
			'Say who makes the change, so it is on record.',
		);
}

export async function pause(
	store: Store,
	scope: PauseScope,
	name: string,
	actor: string,
	reason: string,
): Promise<PauseState> {
	check(scope, name, actor);
	if (!reason.trim())
		throw new PauseChangeRefused(
			`Pausing ${scope} "${name}" needs a reason`,
			'Say why (for example "supplier outage, ticket 4711").',
		);
	const [row] = await store.query<PauseRow>(setPauseSql(store), [
		scope,
		name.trim(),
		true,
		actor.trim(),
		reason.trim(),
	]);
	return toState(row);
}

/** Resumes; for an integration, releases its held items to replay and says how many. */
export async function resume(
	store: Store,
	scope: PauseScope,
	name: string,
	actor: string,
	reason: string,
): Promise<PauseState & { released: number }> {
	check(scope, name, actor);
	const client = await store.pool.connect();
	try {
		await client.query('BEGIN');
		const { rows } = await client.query<PauseRow>(setPauseSql(store), [
			scope,
			name.trim(),
			false,
			actor.trim(),
			reason.trim() || null,
		]);
		let released = 0;
		if (scope === PauseScope.integration) {
			const result = await client.query<{ released: number }>(releaseHeldSql(store), [
				name.trim(),
				actor.trim(),
				`${scope} ${name.trim()} resumed${reason.trim() ? `: ${reason.trim()}` : ''}`,
			]);
			released = result.rows[0].released;
		}
		await client.query('COMMIT');
		return { ...toState(rows[0]), released };
	} catch (error) {
		await client.query('ROLLBACK').catch(() => undefined);
		throw error;
	} finally {
		client.release();
	}
}

export async function listPauses(
	store: Store,
	filter: { scope?: PauseScope; name?: string; paused?: boolean } = {},
): Promise<PauseState[]> {
	const rows = await store.query<PauseRow>(getPausesSql(store), [
		filter.scope ?? null,
		filter.name ?? null,
		filter.paused ?? null,
	]);
	return rows.map(toState);
}

export async function isPaused(
	store: Store,
	scope: PauseScope,
	name: string,
): Promise<PauseState | undefined> {
	const [state] = await listPauses(store, { scope, name, paused: true });
	return state;
}
