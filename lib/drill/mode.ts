import { describeValue } from '../describe';
import { ReliabilityError } from '../errors';
import { lengthProblem, TEXT_LIMITS } from '../limits';
import { maskText } from '../masking';
import type { Store } from '../store';
import { storableText } from '../store/storable';
import {
	armTimeoutSql,
	drillEventsSql,
	drillSql,
	drillsSql,
	fireTimeoutSql,
	startDrillSql,
	stopDrillSql,
} from './sql';

/**
 * Fire drill mode of an integration: switched on by a person (the console), for at most an hour,
 * after which it is off by itself. While on, a drill may arm a forced timeout: the next write of
 * the integration that the target answers with a success has that answer discarded, so the write
 * must recover it by its key. Other integrations are untouched. Every change is in the trail.
 */

/** The longest a drill stays on: a forgotten drill must not keep faulting a live integration. */
export const MAX_DRILL_MINUTES = 60;

export class DrillRefusedError extends ReliabilityError {}

export interface DrillState {
	integration: string;
	active: boolean;
	startedBy: string;
	reason: string | null;
	startedAt: Date;
	expiresAt: Date;
	timeoutArmed: boolean;
	firedAt: Date | null;
	firedScope: string | null;
	firedKey: string | null;
	firedExecution: string | null;
}

export interface DrillEvent {
	integration: string;
	action: string;
	actor: string;
	reason: string | null;
	at: Date;
}

type DrillRow = {
	integration: string;
	active: boolean;
	started_by: string;
	reason: string | null;
	started_at: Date;
	expires_at: Date;
	timeout_armed: boolean;
	fired_at: Date | null;
	fired_scope: string | null;
	fired_key: string | null;
	fired_execution: string | null;
};

const toState = (row: DrillRow): DrillState => ({
	integration: row.integration,
	active: row.active ?? true,
	startedBy: row.started_by,
	reason: row.reason,
	startedAt: row.started_at,
	expiresAt: row.expires_at,
	timeoutArmed: row.timeout_armed,
	firedAt: row.fired_at,
	firedScope: row.fired_scope,
	firedKey: row.fired_key,
	firedExecution: row.fired_execution,
});

function checkedText(value: unknown, what: string, hint: string): string {
	if (typeof value !== 'string' || !value.trim())
		throw new DrillRefusedError(`A fire drill needs ${what} (got ${describeValue(value)})`, hint);
	return storableText(value.trim());
}

function checkedIntegration(value: unknown): string {
	const integration = checkedText(
		value,
		'the integration',
		"Give the integration's name as its Idempotent HTTP Write nodes set it.",
	);
	const tooLong = lengthProblem(integration, TEXT_LIMITS.integration);
	if (tooLong)
		throw new DrillRefusedError(
			tooLong,
			"Give the integration's name as its Idempotent HTTP Write nodes set it.",
		);
	return integration;
}

/** Switches drill mode on for an integration, for `minutes` (1 to 60); again restarts it. */
export async function startDrill(
	store: Store,
	change: { integration: unknown; actor: unknown; reason?: unknown; minutes: unknown },
): Promise<DrillState> {
	const integration = checkedIntegration(change.integration);
	const actor = checkedText(
		change.actor,
		'an actor',
		'Say who starts the drill, so it is on record.',
	);
	const minutes = Number(change.minutes);
	if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_DRILL_MINUTES)
		throw new DrillRefusedError(
			`A fire drill lasts 1 to ${MAX_DRILL_MINUTES} minutes (got ${describeValue(change.minutes)})`,
			`Choose a whole number of minutes up to ${MAX_DRILL_MINUTES}; start it again if the drill needs longer.`,
		);
	const reason =
		typeof change.reason === 'string' ? maskText(storableText(change.reason.trim())) : '';
	const [row] = await store.query<DrillRow>(
		startDrillSql(store, { integration, actor, reason: reason || null, minutes }),
	);
	return toState({ ...row, active: true });
}

/** Ends an integration's drill now; undefined when none was on. */
export async function stopDrill(
	store: Store,
	change: { integration: unknown; actor: unknown; reason?: unknown },
): Promise<DrillState | undefined> {
	const integration = checkedIntegration(change.integration);
	const actor = checkedText(
		change.actor,
		'an actor',
		'Say who stops the drill, so it is on record.',
	);
	const reason =
		typeof change.reason === 'string' ? maskText(storableText(change.reason.trim())) : '';
	const [row] = await store.query<DrillRow>(
		stopDrillSql(store, { integration, actor, reason: reason || null }),
	);
	return row ? toState({ ...row, active: false }) : undefined;
}

/**
 * Arms the forced timeout of an integration whose drill is on, for one event and a while;
 * refused, naming what to do, when it is off (a drill is switched on by a person, never by the
 * run that uses it).
 */
export async function armForcedTimeout(
	store: Store,
	change: { integration: string; actor: string; reason: string; event: string; forMs: number },
): Promise<DrillState> {
	const integration = checkedIntegration(change.integration);
	const [row] = await store.query<DrillRow>(
		armTimeoutSql(store, {
			integration,
			actor: storableText(change.actor),
			reason: storableText(change.reason),
			event: change.event,
			seconds: Math.ceil(change.forMs / 1000),
		}),
	);
	if (!row)
		throw new DrillRefusedError(
			`Fire drill mode is off for integration ${integration}`,
			`Switch it on in the console (Controls, Fire drill) for ${integration}, then run the drill again. It turns itself off after at most ${MAX_DRILL_MINUTES} minutes.`,
		);
	return toState({ ...row, active: true });
}

/**
 * Takes the armed timeout for one write whose target answered a success. True when this write
 * took it: its answer is to be discarded.
 */
export async function fireForcedTimeout(
	store: Store,
	fired: {
		integration: string;
		scope: string;
		key: string;
		businessId?: string;
		executionId?: string;
	},
): Promise<boolean> {
	const rows = await store.query(
		fireTimeoutSql(store, {
			integration: fired.integration,
			scope: fired.scope,
			key: fired.key,
			executionId: fired.executionId ?? null,
			businessId: fired.businessId ?? null,
		}),
	);
	return rows.length > 0;
}

export async function getDrill(store: Store, integration: string): Promise<DrillState | undefined> {
	const [row] = await store.query<DrillRow>(drillSql(store, { integration }));
	return row ? toState(row) : undefined;
}

/** Drills on now, and those that ended within the last day. */
export async function listDrills(store: Store): Promise<DrillState[]> {
	return (await store.query<DrillRow>(drillsSql(store))).map(toState);
}

export async function drillEvents(
	store: Store,
	integration?: string,
	limit = 50,
): Promise<DrillEvent[]> {
	return await store.query<DrillEvent & Record<string, unknown>>(
		drillEventsSql(store, { integration: integration ?? null, limit }),
	);
}
