import { ConfigurationError } from '../errors';
import type { Store } from '../store';
import { nextCronTime, parseCron } from './cron';

/**
 * Heartbeats with Healthchecks.io semantics: a beat is due one period (or the next cron time)
 * after the last one; past that it is late, and past the grace as well it is down. A check
 * reports each change of state once (late, down, and the recovery when beats return), because
 * it records what it reported with a conditional update that only one concurrent check wins.
 */
export type HeartbeatState = 'up' | 'late' | 'down';

export interface BeatRequest {
	name: string;
	periodSeconds?: number;
	cron?: string;
	graceSeconds?: number;
}

export interface HeartbeatStatus {
	name: string;
	state: HeartbeatState;
	lastBeatAt: Date;
	dueAt: Date;
	downAt: Date;
	periodSeconds: number | null;
	cron: string | null;
	graceSeconds: number;
}

export interface HeartbeatChange extends HeartbeatStatus {
	/** What the check reports: the beat became late or down, or it recovered. */
	event: 'late' | 'down' | 'recovered';
	previousState: HeartbeatState;
}

const beatSql = (store: Store): string => `
INSERT INTO ${store.table('heartbeats')} AS h (name, period_seconds, cron, grace_seconds, last_beat_at)
VALUES ($1, $2, $3, $4, now())
ON CONFLICT (name) DO UPDATE SET period_seconds = EXCLUDED.period_seconds, cron = EXCLUDED.cron,
	grace_seconds = EXCLUDED.grace_seconds, last_beat_at = now(), beats = h.beats + 1
RETURNING name, period_seconds, cron, grace_seconds, last_beat_at, now() AS db_now`;

const allSql = (store: Store): string => `
SELECT name, period_seconds, cron, grace_seconds, last_beat_at, reported_state, now() AS db_now
FROM ${store.table('heartbeats')} WHERE ($1::text[] IS NULL OR name = ANY($1)) ORDER BY name`;

const reportSql = (store: Store): string => `
UPDATE ${store.table('heartbeats')} SET reported_state = $2, reported_at = now()
WHERE name = $1 AND reported_state = $3 RETURNING name`;

type HeartbeatRow = {
	name: string;
	period_seconds: number | null;
	cron: string | null;
	grace_seconds: number;
	last_beat_at: Date;
	reported_state?: HeartbeatState;
	db_now: Date;
};

export function heartbeatStatus(row: HeartbeatRow): HeartbeatStatus {
	const dueAt = row.cron
		? nextCronTime(parseCron(row.cron), row.last_beat_at)
		: new Date(row.last_beat_at.getTime() + row.period_seconds! * 1000);
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

/** Records a beat (and the schedule it promises); returns the heartbeat's status after it. */
export async function beat(store: Store, request: BeatRequest): Promise<HeartbeatStatus> {
	const name = request.name?.trim();
	if (!name)
		throw new ConfigurationError(
			'A heartbeat needs a name',
			'Name it after the scheduled workflow, for example "nightly invoice import".',
		);
	const hasPeriod = request.periodSeconds !== undefined && request.periodSeconds > 0;
	const cron = request.cron?.trim() || undefined;
	if (!hasPeriod && !cron)
		throw new ConfigurationError(
			`Heartbeat "${name}" needs a period or a cron`,
			'Say how often it beats: a period in seconds, or the cron of its schedule.',
		);
	if (cron) parseCron(cron);
	const grace = request.graceSeconds ?? 0;
	if (!Number.isFinite(grace) || grace < 0)
		throw new ConfigurationError(
			`Heartbeat "${name}" has a negative grace`,
			'Use 0 or more seconds.',
		);
	const [row] = await store.query<HeartbeatRow>(beatSql(store), [
		name,
		hasPeriod ? Math.round(request.periodSeconds!) : null,
		cron ?? null,
		Math.round(grace),
	]);
	return heartbeatStatus(row);
}

/** Every heartbeat's current state, read only (nothing is marked as reported). */
export async function listHeartbeats(store: Store): Promise<HeartbeatStatus[]> {
	const rows = await store.query<HeartbeatRow>(allSql(store), [null]);
	return rows.map(heartbeatStatus);
}

/** Every heartbeat's current state, and the changes not reported before (each reported once). */
export async function checkHeartbeats(
	store: Store,
	names?: string[],
): Promise<{ heartbeats: HeartbeatStatus[]; changes: HeartbeatChange[] }> {
	const rows = await store.query<HeartbeatRow>(allSql(store), [names?.length ? names : null]);
	const heartbeats = rows.map(heartbeatStatus);
	const changes: HeartbeatChange[] = [];
	for (const [index, status] of heartbeats.entries()) {
		const previous = rows[index].reported_state ?? 'up';
		if (status.state === previous) continue;
		const won = await store.query(reportSql(store), [status.name, status.state, previous]);
		if (won.length === 0) continue;
		changes.push({
			...status,
			event: status.state === 'up' ? 'recovered' : status.state,
			previousState: previous,
		});
	}
	return { heartbeats, changes };
}
