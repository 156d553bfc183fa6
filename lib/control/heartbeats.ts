import { plainText } from '../describe';
import { ConfigurationError, isReliabilityError } from '../errors';
import { checkLength, inRange, LIMITS, TEXT_LIMITS } from '../limits';
import { storableText } from '../store/storable';
import type { Store } from '../store';
import { nextCronTime, parseCron } from './cron';
import { beatSql, heartbeatsSql, reportHeartbeatSql } from './sql';

/**
 * Heartbeats with Healthchecks.io semantics: a beat is due one period (or the next cron time)
 * after the last one; past that it is late, and past the grace as well it is down. A check
 * reports each change of state once (late, down, and the recovery when beats return), because
 * it records what it reported with a conditional update that only one concurrent check wins.
 */
export type HeartbeatState = 'up' | 'late' | 'down' | 'invalid';

export interface BeatRequest {
	name: string;
	periodSeconds?: number;
	cron?: string;
	graceSeconds?: number;
}

export interface HeartbeatStatus {
	name: string;
	/** `invalid`: its stored schedule cannot be checked (written by an older version); see `problem`. */
	state: HeartbeatState;
	lastBeatAt: Date;
	/** Null when the state is invalid. */
	dueAt: Date | null;
	downAt: Date | null;
	periodSeconds: number | null;
	cron: string | null;
	graceSeconds: number;
	/** What is wrong with an invalid heartbeat's schedule, and what to do. */
	problem?: string;
}

export interface HeartbeatChange extends HeartbeatStatus {
	/** What the check reports: the beat became late or down, it recovered, or it cannot be checked. */
	event: 'late' | 'down' | 'recovered' | 'invalid';
	previousState: HeartbeatState;
}

type HeartbeatRow = {
	name: string;
	period_seconds: number | null;
	cron: string | null;
	grace_seconds: number;
	last_beat_at: Date;
	reported_state?: HeartbeatState;
	db_now: Date;
};

/**
 * A heartbeat's state from its row. A row whose schedule cannot be computed (a cron that never
 * fires, stored before schedules were checked) is `invalid` with the reason, never an error: one
 * bad row must not stop the others from being checked, listed or scraped.
 */
export function heartbeatStatus(row: HeartbeatRow): HeartbeatStatus {
	let dueAt: Date;
	try {
		dueAt = dueAfter(row);
	} catch (error) {
		if (!isReliabilityError(error)) throw error;
		return {
			name: row.name,
			state: 'invalid',
			lastBeatAt: row.last_beat_at,
			dueAt: null,
			downAt: null,
			periodSeconds: row.period_seconds,
			cron: row.cron,
			graceSeconds: row.grace_seconds,
			problem:
				`${error.message}. ${error.hint ?? ''} A new beat with a valid schedule replaces it.`.trim(),
		};
	}
	const downAt = new Date(dueAt.getTime() + row.grace_seconds * 1000);
	const now = row.db_now.getTime();
	const state: HeartbeatState =
		now <= dueAt.getTime() ? 'up' : now <= downAt.getTime() ? 'late' : 'down';
	return {
		name: row.name,
		state,
		lastBeatAt: row.last_beat_at,
		dueAt,
		downAt,
		periodSeconds: row.period_seconds,
		cron: row.cron,
		graceSeconds: row.grace_seconds,
	};
}

/** When the next beat is due after the last one; a ConfigurationError when it cannot be known. */
function dueAfter(row: Pick<HeartbeatRow, 'cron' | 'period_seconds' | 'last_beat_at'>): Date {
	if (row.cron) return nextCronTime(parseCron(row.cron), row.last_beat_at);
	const period = row.period_seconds;
	if (!period || period <= 0)
		throw new ConfigurationError(
			`Period of ${period ?? 'nothing'} seconds cannot be checked`,
			'Give the heartbeat a period of at least one second, or a cron.',
		);
	return new Date(row.last_beat_at.getTime() + period * 1000);
}

/**
 * Records a beat (and the schedule it promises); returns the heartbeat's status after it. The
 * schedule is checked in full first, a cron by finding its next fire time, so a schedule that
 * can never be watched (`0 0 30 2 *`, February 30th) is refused instead of stored.
 */
export async function beat(store: Store, request: BeatRequest): Promise<HeartbeatStatus> {
	const name = typeof request.name === 'string' ? storableText(request.name.trim()) : '';
	if (!name)
		throw new ConfigurationError(
			'A heartbeat needs a name',
			'Name it after the scheduled workflow, for example "nightly invoice import".',
		);
	checkLength(name, TEXT_LIMITS.heartbeatName, undefined, "for example the workflow's name.");
	if (request.cron !== undefined && request.cron !== null && typeof request.cron !== 'string')
		throw new ConfigurationError(
			`Heartbeat "${name}": Cron must be text`,
			'Write minute hour day-of-month month day-of-week, for example "0 6 * * 1-5" (UTC).',
		);
	const cron = request.cron?.trim() || undefined;
	const hasPeriod = request.periodSeconds !== undefined && request.periodSeconds !== null;
	if (!hasPeriod && !cron)
		throw new ConfigurationError(
			`Heartbeat "${name}" needs a period or a cron`,
			'Say how often it beats: a period in seconds, or the cron of its schedule.',
		);
	const period = hasPeriod ? inRange(request.periodSeconds, LIMITS.heartbeatPeriodSeconds) : null;
	const grace = inRange(request.graceSeconds ?? 0, LIMITS.heartbeatGraceSeconds);
	if (cron) {
		try {
			nextCronTime(parseCron(cron), new Date());
		} catch (error) {
			if (!isReliabilityError(error)) throw error;
			throw new ConfigurationError(
				`Heartbeat "${name}": cron "${storableText(cron).slice(0, 60)}" cannot be used: ${error.message}`,
				error.hint,
				{ cause: error },
			);
		}
	}
	const [row] = await store.query<HeartbeatRow>(
		beatSql(store, {
			name,
			periodSeconds: period === null ? null : Math.max(1, Math.round(period)),
			cron: cron ? storableText(cron) : null,
			graceSeconds: Math.round(grace),
		}),
	);
	return heartbeatStatus(row);
}

/** Every heartbeat's current state, read only (nothing is marked as reported). */
export async function listHeartbeats(store: Store): Promise<HeartbeatStatus[]> {
	const rows = await store.query<HeartbeatRow>(heartbeatsSql(store, { names: null }));
	return rows.map(heartbeatStatus);
}

/** Every heartbeat's current state, and the changes not reported before (each reported once). */
export async function checkHeartbeats(
	store: Store,
	names?: string[],
): Promise<{ heartbeats: HeartbeatStatus[]; changes: HeartbeatChange[] }> {
	const wanted =
		Array.isArray(names) && names.length ? names.map((n) => storableText(plainText(n))) : null;
	const rows = await store.query<HeartbeatRow>(heartbeatsSql(store, { names: wanted }));
	const heartbeats = rows.map(heartbeatStatus);
	const changes: HeartbeatChange[] = [];
	for (const [index, status] of heartbeats.entries()) {
		const previous = rows[index].reported_state ?? 'up';
		// A heartbeat that cannot be checked is reported once, recorded as down: nobody can tell
		// whether it runs. A beat with a valid schedule brings it back (a recovery).
		const reported = status.state === 'invalid' ? 'down' : status.state;
		if (reported === previous) continue;
		const won = await store.query(
			reportHeartbeatSql(store, { name: status.name, state: reported, previousState: previous }),
		);
		if (won.length === 0) continue;
		changes.push({
			...status,
			event: status.state === 'up' ? 'recovered' : status.state,
			previousState: previous,
		});
	}
	return { heartbeats, changes };
}
