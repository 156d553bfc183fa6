import { describeValue, plainText } from '../describe';
import { ReliabilityError } from '../errors';
import { lengthProblem, TEXT_LIMITS } from '../limits';
import { maskText } from '../masking';
import { storableText } from '../store/storable';
import type { Store } from '../store';
import { pausesSql, releaseHeldSql, setPauseSql } from './sql';

/**
 * Pause and resume of an integration or a workflow, with who and why. While an integration is
 * paused, items parked for it are held; resuming moves its held items to replay_requested, each
 * with an audit event naming who resumed and why.
 */
export const PauseScope = { integration: 'integration', workflow: 'workflow' } as const;
export type PauseScope = (typeof PauseScope)[keyof typeof PauseScope];

export class PauseChangeRefusedError extends ReliabilityError {}

export interface PauseState {
	scope: PauseScope;
	name: string;
	paused: boolean;
	changedBy: string;
	reason: string | null;
	changedAt: Date;
}

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

/** A pause or resume as given, checked: text trimmed and storable, the reason masked. */
function checked(
	scope: unknown,
	name: unknown,
	actor: unknown,
	reason: unknown,
): { scope: PauseScope; name: string; actor: string; reason: string } {
	const text = (value: unknown, field: string): string => {
		if (value === undefined || value === null) return '';
		if (typeof value !== 'string')
			throw new PauseChangeRefusedError(
				`Pausing or resuming: ${field} must be text`,
				`Set ${field} to text.`,
			);
		return storableText(value.trim());
	};
	if (!Object.values(PauseScope).includes(scope as PauseScope))
		throw new PauseChangeRefusedError(
			`Pause scope ${describeValue(scope)} is unknown`,
			'Use integration or workflow.',
		);
	const checkedName = text(name, 'the name');
	if (!checkedName)
		throw new PauseChangeRefusedError(
			`Pausing or resuming needs the ${String(scope)}'s name`,
			`Set the ${String(scope)} name.`,
		);
	const tooLong = lengthProblem(checkedName, {
		...TEXT_LIMITS.pauseName,
		label: `The ${String(scope)} name`,
	});
	if (tooLong)
		throw new PauseChangeRefusedError(
			tooLong,
			`Use the ${String(scope)}'s name as the nodes give it, at most ${TEXT_LIMITS.pauseName.max} characters.`,
		);
	const checkedActor = text(actor, 'the actor');
	if (!checkedActor)
		throw new PauseChangeRefusedError(
			`Pausing or resuming ${String(scope)} "${checkedName}" needs an actor`,
			'Say who makes the change, so it is on record.',
		);
	// A reason is an operator's note: it may quote what they were sent.
	return {
		scope: scope as PauseScope,
		name: checkedName,
		actor: checkedActor,
		reason: maskText(text(reason, 'the reason')),
	};
}

export async function pause(
	store: Store,
	scope: PauseScope,
	name: string,
	actor: string,
	reason: string,
): Promise<PauseState> {
	const change = checked(scope, name, actor, reason);
	if (!change.reason)
		throw new PauseChangeRefusedError(
			`Pausing ${change.scope} "${change.name}" needs a reason`,
			'Say why (for example "supplier outage, ticket 4711").',
		);
	const [row] = await store.query<PauseRow>(
		setPauseSql(store, {
			scope: change.scope,
			name: change.name,
			paused: true,
			actor: change.actor,
			reason: change.reason,
		}),
	);
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
	const change = checked(scope, name, actor, reason);
	return await store.transaction(async (tx) => {
		const rows = await tx.query<PauseRow>(
			setPauseSql(store, {
				scope: change.scope,
				name: change.name,
				paused: false,
				actor: change.actor,
				reason: change.reason || null,
			}),
		);
		let released = 0;
		if (change.scope === PauseScope.integration) {
			const [result] = await tx.query<{ released: number }>(
				releaseHeldSql(store, {
					integration: change.name,
					actor: change.actor,
					reason: `${change.scope} ${change.name} resumed${change.reason ? `: ${change.reason}` : ''}`,
				}),
			);
			released = result.released;
		}
		return { ...toState(rows[0]), released };
	});
}

export async function listPauses(
	store: Store,
	filter: { scope?: PauseScope; name?: string; paused?: boolean } = {},
): Promise<PauseState[]> {
	const rows = await store.query<PauseRow>(
		pausesSql(store, {
			scope: filter.scope ? storableText(plainText(filter.scope)) : null,
			name:
				filter.name === undefined || filter.name === null
					? null
					: storableText(plainText(filter.name)),
			paused: typeof filter.paused === 'boolean' ? filter.paused : null,
		}),
	);
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
