import { ReliabilityError } from '../errors';
import { type Store, type Transaction } from '../store';
import { describeValue } from '../describe';
import { maskText } from '../masking';
import { storableText, storableValue } from '../store/storable';
import {
	closeDoneEventLettersSql,
	closeSucceededSql,
	evidenceSql,
	releaseBreakerHoldsSql,
	replayedStepsSql,
	returnStaleCompensationsSql,
	takeForReplaySql,
	updateStatusSql,
} from './sql';
import {
	ALL_STATUSES,
	ALLOWED_FROM,
	type DeadLetterStatus,
	STATUSES_NEEDING_REASON,
} from './statuses';
import { isDeadLetterId } from './park';
import {
	compensatedReplayMessage,
	compensatedSteps,
	type DeadLetterRecord,
	withHistory,
} from './read';

/**
 * Status changes of dead letters, each guarded by the statuses it may come from and recorded in
 * the audit trail: by a person, by the Replay workflow, by a later success, by a resume.
 */

/** Adds evidence (masked) to a record's audit trail without changing its status. */
export async function appendEvidence(
	store: Store,
	id: string,
	actor: string,
	evidence: string,
): Promise<void> {
	await store.query(
		evidenceSql(store, { id, actor: storableText(actor), evidence: maskText(evidence) }),
	);
}

/** A status change refused before anything was written (no actor, no reason, unknown status). */
export class StatusChangeRefusedError extends ReliabilityError {}

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
		throw new StatusChangeRefusedError(
			`Dead letter ${change.id} does not exist`,
			'Check the ID (Get or List shows the IDs that exist).',
		);
	if (!row.changed) {
		const closed = ALLOWED_FROM[row.status].length === 0 || CLOSED.includes(row.status);
		throw new StatusChangeRefusedError(
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
		throw new StatusChangeRefusedError(
			`Dead letter IDs must be a list, got ${describeValue(ids)}`,
			'Pass the IDs that Park and List output as id.',
		);
	const notAnId = ids.findIndex((id) => !isDeadLetterId(id));
	if (notAnId >= 0)
		throw new StatusChangeRefusedError(
			`Dead letter ID ${describeValue(ids[notAnId])} is not a number`,
			'Dead letter IDs are the numbers Park and List output as id.',
		);
	const which = ids.length === 1 ? `dead letter ${ids[0]}` : `${ids.length} dead letters`;
	if (!ALL_STATUSES.includes(change.to)) {
		throw new StatusChangeRefusedError(
			`Status ${describeValue(change.to)} is unknown`,
			`Use one of ${ALL_STATUSES.join(', ')}.`,
		);
	}
	const actor = typeof change.actor === 'string' ? storableText(change.actor.trim()) : '';
	const reason = typeof change.reason === 'string' ? change.reason.trim() : '';
	if (!actor) {
		throw new StatusChangeRefusedError(
			`Changing ${which} to ${change.to} needs an actor`,
			'Say who makes the change (a name or e-mail), so the audit trail records it.',
		);
	}
	if (STATUSES_NEEDING_REASON.includes(change.to) && !reason) {
		throw new StatusChangeRefusedError(
			`Marking ${which} ${change.to} needs a reason`,
			'Say why (what was done, or why it is given up), so the audit trail records it.',
		);
	}
	if (ids.length === 0) return [];
	return await store.query<StatusChangeRow>(
		updateStatusSql(store, {
			to: change.to,
			actor,
			// An operator's note may quote what they were sent: masked like any text from outside.
			reason: reason ? maskText(reason) : null,
			from: ALLOWED_FROM[change.to],
			generation: change.expectedGeneration ?? null,
			ids: ids.map((id) => String(id).trim()),
		}),
	);
}

/**
 * Closes the open records (new or held) of items whose key has since succeeded at the same step
 * of the same workflow, so the review queue does not show work that is done. Returns how many.
 */
export async function closeSucceededDeadLetters(
	store: Store,
	done: {
		workflowId: string;
		step: string;
		keys: Array<{ scope: string; key: string; fingerprint?: string }>;
		actor: string;
		reason: string;
	},
): Promise<number> {
	if (done.keys.length === 0) return 0;
	const rows = await store.query<StatusChangeRow>(
		closeSucceededSql(store, {
			to: 'replayed',
			actor: done.actor,
			reason: done.reason,
			from: ALLOWED_FROM.replayed,
			generation: null,
			keys: storableValue(done.keys),
			workflowId: done.workflowId,
			step: done.step,
		}),
	);
	return rows.filter((row) => row.changed).length;
}

/**
 * Closes the open letters of the events an execution has done (see closeDoneEventLettersSql):
 * the item succeeded on a later delivery, a replay or a recovery. Returns how many closed.
 */
export async function closeDoneEventLetters(
	store: Store,
	executionId: string,
	/** The caller's transaction, when the close must commit with its work. */
	via: Pick<Transaction, 'query'> = store,
): Promise<number> {
	const rows = await via.query<StatusChangeRow>(
		closeDoneEventLettersSql(store, {
			to: 'replayed',
			actor: 'Event Dedupe',
			reason: `the event's work succeeded (execution ${executionId})`,
			from: ALLOWED_FROM.replayed,
			generation: null,
			executionId,
		}),
	);
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
	const rows = await store.query<StatusChangeRow>(
		releaseBreakerHoldsSql(store, {
			to: 'replay_requested',
			actor: release.actor,
			reason: release.reason,
			from: ALLOWED_FROM.replay_requested,
			generation: null,
			integration: release.integration ?? null,
		}),
	);
	return rows.filter((row) => row.changed).length;
}

/**
 * Asks again for the replay of records a run took and did not settle: each record still at the
 * generation its take gave it goes back to `replay_requested` (the next replay run takes it at
 * once, not after Retake After). A record settled meanwhile (replayed, back in new, changed by a
 * person) is left as it is. Returns the IDs asked for again.
 */
export async function returnUnsettledTakes(
	store: Store,
	taken: Array<{ id: string; generation: string }>,
	change: { actor: string; reason: string },
): Promise<string[]> {
	const returned: string[] = [];
	for (const record of taken) {
		try {
			await updateDeadLetterStatus(store, {
				id: record.id,
				to: 'replay_requested',
				actor: change.actor,
				reason: change.reason,
				expectedGeneration: record.generation,
			});
			returned.push(record.id);
		} catch (error) {
			if (!(error instanceof StatusChangeRefusedError)) throw error;
		}
	}
	return returned;
}

/** What the store says now of a record's failed step (see replayedStepsSql). */
export interface FailedStepNow {
	id: string;
	status: DeadLetterStatus;
	generation: string;
	step: string;
	/** The status of the write key the record is parked under; null when it names none. */
	key_status: string | null;
	/** The status of the event an event letter names; null for any other letter. */
	event_status: string | null;
}

/** What the store says now of the failed step of records `ids`, by record id. */
export async function failedStepsNow(
	store: Store,
	ids: string[],
): Promise<Map<string, FailedStepNow>> {
	const rows = await store.query<FailedStepNow>(replayedStepsSql(store, { ids }));
	return new Map(rows.map((r) => [String(r.id), r]));
}

/** Whether a record's failed step has since finished: its write key succeeded, its event done. */
export const stepDoneNow = (row: FailedStepNow): boolean =>
	row.key_status === 'succeeded' || row.event_status === 'done';

/**
 * Settles the records a replay run took and left unsettled when the run ended in success: its
 * re-run of a record ended with no result the run could read (the workflow ended on a path that
 * is not a write's success output, or returned no item), and without parking the record again.
 * The store then says how its failed step ended: a record whose write key now reads succeeded,
 * or whose event is done, is `replayed` (the re-run passed that step; a later step that failed
 * has parked its own letter); one whose key or event did not finish goes back to `new` for a
 * person, with what its record says; one the store cannot judge (a key of the user's own, an
 * execution-level record) is `replayed`, as a re-run that finished without parking it again.
 * Records settled or changed meanwhile are left alone (the take's generation). Returns the
 * records it settled, each with its new status.
 */
export async function settleUnsettledTakes(
	store: Store,
	taken: Array<{ id: string; generation: string }>,
	actor: string,
): Promise<Array<{ id: string; to: DeadLetterStatus }>> {
	if (taken.length === 0) return [];
	const byId = await failedStepsNow(
		store,
		taken.map((t) => t.id),
	);
	const settled: Array<{ id: string; to: DeadLetterStatus }> = [];
	for (const record of taken) {
		const row = byId.get(record.id);
		if (!row || row.status !== 'being_fixed' || String(row.generation) !== record.generation)
			continue;
		const finished = row.key_status ?? row.event_status;
		const done = stepDoneNow(row);
		const to: DeadLetterStatus = finished === null || done ? 'replayed' : 'new';
		const reason =
			to === 'new'
				? `the re-run ended without ${row.step} succeeding (its ${row.key_status !== null ? 'write key' : 'event'} is ${finished}) and did not park the item again: check the run`
				: done
					? `the re-run finished ${row.step}; a later step that failed has its own letter`
					: 're-run finished';
		try {
			await updateDeadLetterStatus(store, {
				id: record.id,
				to,
				actor,
				reason,
				expectedGeneration: record.generation,
			});
			settled.push({ id: record.id, to });
		} catch (error) {
			if (!(error instanceof StatusChangeRefusedError)) throw error;
		}
	}
	return settled;
}

/** How long Compensate may hold a record before its hold counts as dead (its run stopped or died). */
const COMPENSATION_STALE_MINUTES = 30;

/**
 * Hands back the records a Compensate run held and never closed nor released (it stopped or
 * died between two reversals, past COMPENSATION_STALE_MINUTES): back to new, their alert due, so
 * a person checks the target. Returns their IDs.
 */
export async function returnStaleCompensations(
	store: Store,
	input: { actor: string; limit: number; workflowId?: string; staleAfterMinutes?: number },
): Promise<string[]> {
	const rows = await store.query<{ id: string }>(
		returnStaleCompensationsSql(store, {
			actor: input.actor,
			reason:
				'compensation interrupted: the Compensate run that held this record stopped or died before it finished; the history lists what was reversed and what the target answered. Check the target, then compensate again (only what was not reversed is sent) or resolve',
			staleAfterMinutes: input.staleAfterMinutes ?? COMPENSATION_STALE_MINUTES,
			limit: input.limit,
			workflowId: input.workflowId ?? null,
		}),
	);
	return rows.map((row) => String(row.id));
}

/**
 * Takes records asked to be replayed for one replay run, atomically (two overlapping runs never
 * take one record): each is being fixed, at a new generation the run presents when it marks the
 * record replayed. Held records whose breaker cool-down is over are released to replay first.
 * A taken record whose steps Compensate reversed is not replayed: it goes back to new, for a
 * person, with the steps, when and by whom in its history.
 */
export async function takeForReplay(
	store: Store,
	take: { taker: string; limit: number; workflowId?: string; staleAfterMinutes?: number },
): Promise<Array<DeadLetterRecord & { generation: string }>> {
	await releaseBreakerHolds(store, { actor: take.taker, reason: 'circuit breaker cool-down over' });
	const rows = await store.query<Record<string, unknown>>(
		takeForReplaySql(store, {
			taker: take.taker,
			reason: 'taken for replay',
			limit: take.limit,
			workflowId: take.workflowId ?? null,
			staleAfterMinutes: take.staleAfterMinutes ?? 30,
		}),
	);
	const compensated = await compensatedSteps(
		store,
		rows.map((row) => String(row.id)),
	);
	for (const [id, steps] of compensated) {
		const row = rows.find((r) => String(r.id) === id)!;
		try {
			await updateDeadLetterStatus(store, {
				id,
				to: 'new',
				actor: take.taker,
				reason: compensatedReplayMessage(id, steps),
				expectedGeneration: String(row.generation),
			});
		} catch (error) {
			if (!(error instanceof StatusChangeRefusedError)) throw error;
		}
	}
	const records = await withHistory(
		store,
		rows
			.filter((row) => !compensated.has(String(row.id)))
			.map((row) => {
				const record = { ...row };
				delete record.from_status;
				return record;
			}),
	);
	return records.map((record) => ({ ...record, generation: String(record.generation) }));
}
