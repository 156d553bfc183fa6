import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';
import { ReliabilityError } from '../errors';
import type { Compensation } from '../idempotency/compensation';
import type { AttemptEntry } from '../idempotency/types';
import { deleteInSlices, type Store } from '../store';
import { describeValue, plainText } from '../describe';
import { inRange, LIMITS, optionalInRange } from '../limits';
import { maskText, maskValue } from '../masking';
import { storableText, storableValue } from '../store/storable';
import { checkParkRequests, storable } from './validate';
import {
	closeSucceededSql,
	countSql,
	evidenceSql,
	getByIdSql,
	getByKeySql,
	heldByIntegrationSql,
	historySql,
	latestSourceVersionSql,
	listSql,
	parkSql,
	purgeDailyStatsSql,
	purgeSql,
	releaseBreakerHoldsSql,
	statsSql,
	takeForReplaySql,
	updateStatusSql,
} from './sql';
import {
	ALL_STATUSES,
	ALLOWED_FROM,
	type DeadLetterStatus,
	type ErrorClass,
	STATUSES_NEEDING_REASON,
} from './statuses';

/** What the caller knows about one failed item; the engine masks secrets and picks its identity. */
export interface ParkRequest {
	workflowId: string;
	workflowName?: string;
	executionId?: string;
	/** The step (node) the item failed at. */
	step: string;
	itemIndex?: number;
	idempotencyKey?: string;
	runLink?: string;
	integration?: string;
	errorClass: ErrorClass | string;
	errorMessage?: string;
	errorStatus?: number;
	attempts?: number;
	alreadyHappened?: string;
	impact?: string;
	owner?: string;
	severity?: string;
	/** `held` while the integration is paused or its breaker open; `new` otherwise. */
	status?: DeadLetterStatus;
	/** What holds a held item: the integration's pause, or its open breaker. */
	holdReason?: 'pause' | 'breaker';
	payload: unknown;
	retryAfter?: Date;
	retentionDays?: number;
	/** The workflow's version: a version ID, or a fingerprint (see workflowFingerprint). */
	sourceVersion?: string;
	/** The attempts the write made for the item, oldest first (masked again when stored). */
	attemptHistory?: AttemptEntry[];
	/** The steps of the same item that had taken effect, oldest first. */
	steps?: ItemStep[];
}

/** A write step that took effect before the item was parked, and how to reverse it. */
export interface ItemStep {
	scope: string;
	key: string;
	/** The node that wrote it. */
	step: string | null;
	completedAt: string | null;
	responseStatus: number | null;
	/** The saved response body (masked, as saved), as text. */
	response: string | null;
	compensation: Compensation | null;
}

export interface ParkOptions {
	/** Field names to mask besides the default secret names (see lib/masking). */
	maskFields?: string[];
}

export interface ParkResult {
	id: string;
	status: DeadLetterStatus;
	failureCount: number;
	/** False when an open record of the same item was updated instead. */
	created: boolean;
}

const itemKeyOf = (idempotencyKey: string | null, maskedPayload: unknown): string =>
	idempotencyKey
		? `key:${idempotencyKey}`
		: `payload:${createHash('sha256').update(canonicalJson(maskedPayload)).digest('hex')}`;

/** A dead-letter ID: the bigint the store assigned, as decimal text. */
const isDeadLetterId = (id: unknown): boolean => typeof id === 'string' && /^\d{1,18}$/.test(id);

/**
 * Parks a batch of items in one statement; the results come back in input order. The same item
 * twice in one batch is one record (its later failure wins).
 */
export async function parkItems(
	store: Store,
	requests: ParkRequest[],
	options: ParkOptions = {},
): Promise<ParkResult[]> {
	if (requests.length === 0) return [];
	checkParkRequests(requests);
	const rows = requests.map((request, ord) => {
		// Secrets never land in the store: the payload and every text that came from outside.
		// Masked text is storable too; the other text columns are made storable (no NUL).
		// A payload of null (or none, or one JSON has no value for, such as NaN) is stored as {}:
		// the column holds JSON, and SQL NULL is not.
		const masked = maskValue(request.payload ?? {}, options.maskFields);
		const payload = JSON.stringify(masked ?? null) === 'null' ? {} : masked;
		const text = (value: string | undefined): string | null =>
			value === undefined || value === null ? null : maskText(value, options.maskFields);
		const idempotencyKey = storable(request.idempotencyKey);
		return {
			ord,
			workflow_id: storable(request.workflowId),
			workflow_name: storable(request.workflowName),
			execution_id: storable(request.executionId),
			step: storable(request.step),
			item_index: request.itemIndex ?? null,
			item_key: itemKeyOf(idempotencyKey, payload),
			idempotency_key: idempotencyKey,
			run_link: storable(request.runLink),
			integration: storable(request.integration),
			error_class: storable(request.errorClass),
			error_message: text(request.errorMessage),
			error_status: request.errorStatus ?? null,
			attempts: request.attempts ?? 1,
			already_happened: text(request.alreadyHappened),
			impact: text(request.impact),
			owner: storable(request.owner),
			severity: storable(request.severity),
			status: request.status ?? 'new',
			hold_reason: request.holdReason ?? null,
			payload,
			retry_after: request.retryAfter?.toISOString() ?? null,
			retention_days: request.retentionDays ?? 90,
			source_version: storable(request.sourceVersion),
			steps: maskValue(request.steps ?? [], options.maskFields) ?? [],
			attempt_history: maskValue(request.attemptHistory ?? [], options.maskFields) ?? [],
		};
	});
	const identity = (row: (typeof rows)[number]): string =>
		JSON.stringify([row.workflow_id, row.step, row.item_key]);
	const last = new Map<string, (typeof rows)[number]>();
	for (const row of rows) last.set(identity(row), row);
	const unique = [...last.values()];
	const result = await store.query<{
		id: string;
		status: DeadLetterStatus;
		failure_count: number;
		inserted: boolean;
		ord: number;
	}>(parkSql(store), [JSON.stringify(storableValue(unique))]);
	const byIdentity = new Map(
		result.map((r) => [identity(unique.find((u) => u.ord === r.ord)!), r]),
	);
	return rows.map((row) => {
		const r = byIdentity.get(identity(row))!;
		return {
			id: String(r.id),
			status: r.status,
			failureCount: r.failure_count,
			created: r.inserted,
		};
	});
}

export interface DeadLetterEvent {
	at: Date;
	actor: string;
	fromStatus: string | null;
	toStatus: string;
	reason: string | null;
}

export type DeadLetterRecord = Record<string, unknown> & {
	id: string;
	status: DeadLetterStatus;
	history: DeadLetterEvent[];
};

async function withHistory(
	store: Store,
	rows: Array<Record<string, unknown>>,
): Promise<DeadLetterRecord[]> {
	if (rows.length === 0) return [];
	const events = await store.query<{
		dead_letter_id: string;
		at: Date;
		actor: string;
		from_status: string | null;
		to_status: string;
		reason: string | null;
	}>(historySql(store), [rows.map((r) => r.id)]);
	return rows.map((row) => ({
		...row,
		id: String(row.id),
		status: row.status as DeadLetterStatus,
		history: events
			.filter((e) => String(e.dead_letter_id) === String(row.id))
			.map((e) => ({
				at: e.at,
				actor: e.actor,
				fromStatus: e.from_status,
				toStatus: e.to_status,
				reason: e.reason,
			})),
	}));
}

/** Adds evidence (masked) to a record's audit trail without changing its status. */
export async function appendEvidence(
	store: Store,
	id: string,
	actor: string,
	evidence: string,
): Promise<void> {
	await store.query(evidenceSql(store), [id, storableText(actor), maskText(evidence)]);
}

/** Records by id, with their audit history; ids not found are simply absent. */
export async function getDeadLetters(store: Store, ids: string[]): Promise<DeadLetterRecord[]> {
	const valid = ids.filter(isDeadLetterId);
	if (valid.length === 0) return [];
	return await withHistory(store, await store.query(getByIdSql(store), [valid]));
}

/** Records that carry an idempotency key (newest first), with their audit history. */
export async function getDeadLettersByKey(
	store: Store,
	keys: string[],
): Promise<DeadLetterRecord[]> {
	return await withHistory(
		store,
		await store.query(getByKeySql(store), [keys.map((key) => storableText(plainText(key)))]),
	);
}

/**
 * Whether the workflow changed since a record was parked: the version seen by a later failure
 * at the same step, when it differs from the record's. Undefined when the record has no version
 * or nothing later was seen (the store cannot know the workflow's current state otherwise).
 */
export async function newerSourceVersion(
	store: Store,
	record: DeadLetterRecord,
): Promise<{ sourceVersion: string; seenAt: Date } | undefined> {
	if (typeof record.source_version !== 'string' || !record.source_version) return undefined;
	const [row] = await store.query<{ source_version: string; last_failed_at: Date }>(
		latestSourceVersionSql(store),
		[record.workflow_id, record.step, record.last_failed_at],
	);
	if (!row || row.source_version === record.source_version) return undefined;
	return { sourceVersion: row.source_version, seenAt: row.last_failed_at };
}

export interface ListFilter {
	statuses?: DeadLetterStatus[];
	workflowId?: string;
	step?: string;
	errorClass?: string;
	owner?: string;
	integration?: string;
	/** Only items parked at least this many minutes ago. */
	olderThanMinutes?: number;
	/** Text in the error message. */
	search?: string;
	limit?: number;
}

function filterValues(filter: ListFilter): unknown[] {
	const minutes = optionalInRange(filter.olderThanMinutes, LIMITS.olderThanMinutes);
	const olderThan = minutes ? new Date(Date.now() - minutes * 60_000) : null;
	const text = (value: unknown): string | null =>
		value === undefined || value === null || value === '' ? null : storableText(plainText(value));
	return [
		filter.statuses?.length ? filter.statuses.map((s) => storableText(plainText(s))) : null,
		text(filter.workflowId),
		text(filter.step),
		text(filter.errorClass),
		text(filter.owner),
		text(filter.integration),
		olderThan,
		text(filter.search),
	];
}

export async function listDeadLetters(
	store: Store,
	filter: ListFilter = {},
): Promise<Array<Record<string, unknown>>> {
	return await store.query(listSql(store), [
		...filterValues(filter),
		inRange(filter.limit ?? 100, LIMITS.listLimit),
	]);
}

/** How many records match a filter (the list is limited; the count is not). */
export async function countDeadLetters(store: Store, filter: ListFilter = {}): Promise<number> {
	const [row] = await store.query<{ n: number }>(countSql(store), filterValues(filter));
	return row.n;
}

/** How many records are held, per integration (only integrations that hold any). */
export async function heldByIntegration(
	store: Store,
): Promise<Array<{ integration: string; held: number }>> {
	return await store.query<{ integration: string; held: number }>(heldByIntegrationSql(store));
}

/** A status change refused before anything was written (no actor, no reason, unknown status). */
export class StatusChangeRefused extends ReliabilityError {}

export interface StatusChange {
	id: string;
	to: DeadLetterStatus;
	actor: string;
	reason?: string;
}

export interface StatusChangeResult {
	id: string;
	from: DeadLetterStatus;
	to: DeadLetterStatus;
	/** The record's generation after the change: a take presents it to settle the record. */
	generation: string;
}

type StatusChangeRow = {
	id: string;
	status: DeadLetterStatus;
	from_status: DeadLetterStatus;
	changed: boolean;
	generation: string;
};

/**
 * Changes a record's status and appends the audit event; refuses changes without who (and why),
 * from a status that does not lead there (a closed record is never reopened), and, with
 * `expectedGeneration`, changes that an older take would make after someone else moved it on.
 */
export async function updateDeadLetterStatus(
	store: Store,
	change: StatusChange & { expectedGeneration?: string | number },
): Promise<StatusChangeResult> {
	const [row] = await changeStatuses(store, [change.id], change);
	if (!row)
		throw new StatusChangeRefused(
			`Dead letter ${change.id} does not exist`,
			'Check the ID (Get or List shows the IDs that exist).',
		);
	if (!row.changed) {
		const closed = ALLOWED_FROM[row.status].length === 0 || CLOSED.includes(row.status);
		throw new StatusChangeRefused(
			row.status === change.to
				? `Dead letter ${change.id} is already ${change.to}`
				: !ALLOWED_FROM[change.to].includes(row.status)
					? `Dead letter ${change.id} is ${row.status}${closed ? ' (closed)' : ''}: it cannot move to ${change.to}`
					: `Dead letter ${change.id} was changed meanwhile (now ${row.status}); this change was made for an older state`,
			closed
				? 'A closed record stays closed; if the item fails again, it is parked as a new record.'
				: 'Get the record to see its current status and history, then decide again.',
		);
	}
	return {
		id: String(row.id),
		from: row.from_status,
		to: row.status,
		generation: String(row.generation),
	};
}

const CLOSED: DeadLetterStatus[] = ['replayed', 'resolved', 'abandoned', 'compensated'];

/**
 * Changes many records' status in one statement, each with its audit event; refuses the change
 * without who (and why). Returns the records that changed: ids that do not exist, and records
 * whose status does not lead to the new one, are left out.
 */
export async function updateDeadLetterStatuses(
	store: Store,
	ids: string[],
	change: Omit<StatusChange, 'id'>,
): Promise<StatusChangeResult[]> {
	const rows = await changeStatuses(store, ids, change);
	return rows
		.filter((row) => row.changed)
		.map((row) => ({
			id: String(row.id),
			from: row.from_status,
			to: row.status,
			generation: String(row.generation),
		}));
}

async function changeStatuses(
	store: Store,
	ids: string[],
	change: Omit<StatusChange, 'id'> & { expectedGeneration?: string | number },
): Promise<StatusChangeRow[]> {
	if (!Array.isArray(ids))
		throw new StatusChangeRefused(
			`Dead letter IDs must be a list, got ${describeValue(ids)}`,
			'Pass the IDs that Park and List output as id.',
		);
	const notAnId = ids.findIndex((id) => !isDeadLetterId(id));
	if (notAnId >= 0)
		throw new StatusChangeRefused(
			`Dead letter ID ${describeValue(ids[notAnId])} is not a number`,
			'Dead letter IDs are the numbers Park and List output as id.',
		);
	const which = ids.length === 1 ? `dead letter ${ids[0]}` : `${ids.length} dead letters`;
	if (!ALL_STATUSES.includes(change.to)) {
		throw new StatusChangeRefused(
			`Status ${describeValue(change.to)} is unknown`,
			`Use one of ${ALL_STATUSES.join(', ')}.`,
		);
	}
	const actor = typeof change.actor === 'string' ? storableText(change.actor.trim()) : '';
	const reason = typeof change.reason === 'string' ? change.reason.trim() : '';
	if (!actor) {
		throw new StatusChangeRefused(
			`Changing ${which} to ${change.to} needs an actor`,
			'Say who makes the change (a name or e-mail), so the audit trail records it.',
		);
	}
	if (STATUSES_NEEDING_REASON.includes(change.to) && !reason) {
		throw new StatusChangeRefused(
			`Marking ${which} ${change.to} needs a reason`,
			'Say why (what was done, or why it is given up), so the audit trail records it.',
		);
	}
	if (ids.length === 0) return [];
	return await store.query<StatusChangeRow>(updateStatusSql(store), [
		change.to,
		actor,
		// An operator's note may quote what they were sent: masked like any text from outside.
		reason ? maskText(reason) : null,
		ALLOWED_FROM[change.to],
		change.expectedGeneration ?? null,
		ids.map((id) => String(id).trim()),
	]);
}

/**
 * Closes the open records (new or held) of items whose key has since succeeded at the same step
 * of the same workflow, so the review queue does not show work that is done. Returns how many.
 */
export async function closeSucceededDeadLetters(
	store: Store,
	done: { workflowId: string; step: string; keys: string[]; actor: string; reason: string },
): Promise<number> {
	if (done.keys.length === 0) return 0;
	const rows = await store.query<StatusChangeRow>(closeSucceededSql(store), [
		'replayed',
		done.actor,
		done.reason,
		ALLOWED_FROM.replayed,
		null,
		done.keys,
		done.workflowId,
		done.step,
	]);
	return rows.filter((row) => row.changed).length;
}

/**
 * Sends held records whose breaker no longer holds them (closed, or its cool-down over, and the
 * integration not paused) to replay; of one integration, or of all. Returns how many.
 */
export async function releaseBreakerHolds(
	store: Store,
	release: { integration?: string; actor: string; reason: string },
): Promise<number> {
	const rows = await store.query<StatusChangeRow>(releaseBreakerHoldsSql(store), [
		'replay_requested',
		release.actor,
		release.reason,
		ALLOWED_FROM.replay_requested,
		null,
		release.integration ?? null,
	]);
	return rows.filter((row) => row.changed).length;
}

/**
 * Takes records asked to be replayed for one replay run, atomically (two overlapping runs never
 * take one record): each is being fixed, at a new generation the run presents when it marks the
 * record replayed. Held records whose breaker cool-down is over are released to replay first.
 */
export async function takeForReplay(
	store: Store,
	take: { taker: string; limit: number; workflowId?: string; staleAfterMinutes?: number },
): Promise<Array<DeadLetterRecord & { generation: string }>> {
	await releaseBreakerHolds(store, { actor: take.taker, reason: 'circuit breaker cool-down over' });
	const rows = await store.query<Record<string, unknown>>(takeForReplaySql(store), [
		take.taker,
		'taken for replay',
		take.limit,
		take.workflowId ?? null,
		take.staleAfterMinutes ?? 30,
	]);
	const records = await withHistory(
		store,
		rows.map((row) => {
			const record = { ...row };
			delete record.from_status;
			return record;
		}),
	);
	return records.map((record) => ({ ...record, generation: String(record.generation) }));
}

/** Deletes closed records past retention and says how many; open records are never purged. */
export async function purgeDeadLetters(store: Store, sliceSize = 10_000): Promise<number> {
	return await deleteInSlices(store, purgeSql(store), [], sliceSize);
}

/**
 * Deletes the daily stats rollup for days more than `olderThanDays` ago; says how many rows.
 * The rollup outlives the records it counts, so keep it at least as long as the stats look back.
 */
export async function purgeDeadLetterStats(
	store: Store,
	olderThanDays: number,
	sliceSize = 10_000,
): Promise<number> {
	return await deleteInSlices(store, purgeDailyStatsSql(store), [olderThanDays], sliceSize);
}

export interface DeadLetterStats {
	parkedPerDay: Array<{ day: string; parked: number }>;
	openByStatus: Record<string, number>;
	openCount: number;
	oldestWaitSeconds: number | null;
	medianWaitSeconds: number | null;
	/** Mean time from parking to closing, over items parked in the window and closed since. */
	averageResolutionSeconds: number | null;
	topReasons: Array<{ reason: string; count: number }>;
	openByWorkflow: Array<{ workflow_id: string; open: number }>;
	openByStep: Array<{ step: string; open: number }>;
	openByOwner: Array<{ owner: string; open: number }>;
}

export async function deadLetterStats(
	store: Store,
	options: { days?: number; workflowId?: string; topReasons?: number } = {},
): Promise<DeadLetterStats> {
	const [row] = await store.query<Record<string, unknown>>(statsSql(store), [
		inRange(options.days ?? 30, LIMITS.statsDays),
		options.workflowId ? storableText(plainText(options.workflowId)) : null,
		inRange(options.topReasons ?? 5, { label: 'Top reasons', min: 0, max: 1000, integer: true }),
	]);
	return {
		parkedPerDay: row.parked_per_day as DeadLetterStats['parkedPerDay'],
		openByStatus: row.open_by_status as Record<string, number>,
		openCount: row.open_count as number,
		oldestWaitSeconds: row.oldest_wait_seconds as number | null,
		medianWaitSeconds: row.median_wait_seconds as number | null,
		averageResolutionSeconds: row.average_resolution_seconds as number | null,
		topReasons: row.top_reasons as DeadLetterStats['topReasons'],
		openByWorkflow: row.open_by_workflow as DeadLetterStats['openByWorkflow'],
		openByStep: row.open_by_step as DeadLetterStats['openByStep'],
		openByOwner: row.open_by_owner as DeadLetterStats['openByOwner'],
	};
}
