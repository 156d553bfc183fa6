import { parkedOrThrow, parkItems, type ParkResult } from '../deadletter/park';
import { closeDoneEventLetters } from '../deadletter/status';
import { ErrorClass } from '../deadletter/statuses';
import { abandonExecutionKeys } from '../idempotency/recovery';
import { KeyStatus } from '../idempotency/types';
import type { Store } from '../store';
import { eventLetterKey } from './eventIds';
import { ProcessedEventStatus } from './outcomes';
import {
	completeExecutionSql,
	countInboxOfExecutionSql,
	endExecutionLeasesSql,
	executionReportedSql,
	failedClaimsOfExecutionSql,
	failExecutionClaimsSql,
	holdExecutionClaimsSql,
	inboxOfExecutionSql,
	recordExecutionReportSql,
	releaseExecutionSql,
	returnToRecoverySql,
	takeCrashedSql,
} from './sql';

/**
 * The durable inbox: claims made "until the execution ends" keep their items. How an execution
 * ended settles them: success completes them, an error leaves them failed (a redelivery claims
 * them again; the error workflow parks them with their items, or the end-of-execution hook does
 * when n8n runs none for the run), a wait keeps them until the execution may resume. A crash settles nothing: the lease ends and Recover re-runs the items,
 * a few times, then gives them up to be parked as crashed.
 */
export const ExecutionEnd = {
	success: 'success',
	error: 'error',
	waiting: 'waiting',
	crashed: 'crashed',
} as const;
export type ExecutionEnd = (typeof ExecutionEnd)[keyof typeof ExecutionEnd];

interface InboxItem {
	consumer: string;
	eventId: string;
	workflowId: string | null;
	originExecutionId: string | null;
	payload: unknown;
	/** Set when the item was over the inbox cap and was not kept. */
	payloadBytes: number | null;
}

type InboxRow = {
	consumer: string;
	event_id: string;
	workflow_id: string | null;
	origin_execution_id: string | null;
	payload: unknown;
	payload_bytes: number | null;
};

/** What a letter keeps of an inbox item: its payload, or why the inbox did not keep it. */
export const keptPayload = (item: InboxItem): unknown =>
	item.payload ?? {
		eventId: item.eventId,
		note: `the item (${item.payloadBytes ?? '?'} bytes) was over the inbox cap and was not kept`,
	};

const toItem = (row: InboxRow): InboxItem => ({
	consumer: row.consumer,
	eventId: row.event_id,
	workflowId: row.workflow_id,
	originExecutionId: row.origin_execution_id,
	payload: row.payload,
	payloadBytes: row.payload_bytes,
});

/** Settles an execution's claims by how it ended (the end-of-execution hook, in its own process). */
export async function settleExecutionClaims(
	store: Store,
	executionId: string,
	end: { status: ExecutionEnd; message?: string; waitTill?: Date; leaseSeconds?: number },
): Promise<void> {
	switch (end.status) {
		case ExecutionEnd.success:
			await store.execute(completeExecutionSql(store, { executionId }));
			// Letters of these items from earlier deliveries (failed, stopped) are done with.
			await closeDoneEventLetters(store, executionId);
			return;
		case ExecutionEnd.waiting:
			await store.execute(
				holdExecutionClaimsSql(store, {
					executionId,
					waitTill: end.waitTill ?? new Date(Date.now() + 24 * 3600_000),
					leaseSeconds: end.leaseSeconds ?? 60,
				}),
			);
			return;
		case ExecutionEnd.crashed:
			await store.execute(
				endExecutionLeasesSql(store, { executionId, message: end.message ?? null }),
			);
			return;
		default:
			await store.execute(
				failExecutionClaimsSql(store, { executionId, message: end.message ?? null }),
			);
	}
}

export interface FailedExecution {
	/**
	 * n8n reported this execution before (a crash reported again at the next restart), and it was
	 * settled then: nothing was settled, parked or is to be alerted now.
	 */
	repeated: boolean;
	/** Inbox items of a failed execution, for the error workflow to park with their payloads. */
	items: InboxItem[];
	/** Inbox items of a crashed execution, now left to Recover. */
	recovering: number;
	/** Items the inbox kept for the execution's claims at all (Recover may hold some already). */
	kept: number;
	/** Claims of the other modes, released so a redelivery is new. */
	released: number;
	/** The execution's write keys that were still in progress: now failed (nothing sent) or unknown. */
	keys: Array<{ scope: string; key: string; status: string }>;
}

/**
 * The error workflow's step for a failed or crashed execution: its in-progress write keys are
 * marked at once (a redelivery or a recovery reconciles them now, instead of waiting out a
 * lease), its inbox claims are failed with their items (to park) or, for a crash, left to
 * Recover; claims of the other modes are released. A crash whose claims its own end-of-execution
 * hook failed did end in its process: those items are parked. An execution settled before (n8n
 * reporting a crash again) is settled no more: `repeated`, and nothing to park or alert.
 */
export async function failExecution(
	store: Store,
	execution: { executionId: string; crashed: boolean; message?: string },
): Promise<FailedExecution> {
	if (await executionReported(store, execution.executionId))
		return { repeated: true, items: [], recovering: 0, kept: 0, released: 0, keys: [] };
	const keys = await abandonExecutionKeys(store, execution.executionId);
	let items: InboxItem[] = [];
	let recovering = 0;
	if (execution.crashed) {
		recovering = (
			await store.execute(
				endExecutionLeasesSql(store, {
					executionId: execution.executionId,
					message: execution.message ?? null,
				}),
			)
		).rowCount;
		items = (
			await store.query<InboxRow>(
				failedClaimsOfExecutionSql(store, {
					executionId: execution.executionId,
					message: execution.message ?? null,
				}),
			)
		).map(toItem);
	} else {
		items = (
			await store.query<InboxRow>(
				failExecutionClaimsSql(store, {
					executionId: execution.executionId,
					message: execution.message ?? null,
				}),
			)
		).map(toItem);
	}
	const [{ released }] = await store.query<{ released: number }>(
		releaseExecutionSql(store, { executionId: execution.executionId }),
	);
	const [{ kept }] = await store.query<{ kept: number }>(
		countInboxOfExecutionSql(store, { executionId: execution.executionId }),
	);
	return { repeated: false, items, recovering, kept, released, keys };
}

/** Whether an execution's ending was settled already. */
async function executionReported(store: Store, executionId: string): Promise<boolean> {
	return (await store.query(executionReportedSql(store, { executionId }))).length > 0;
}

/**
 * Records that an execution's ending was settled (its items parked, or left to Recover), once
 * that is done: a report n8n repeats later finds it and settles nothing. Returns the count.
 */
export async function recordExecutionReport(
	store: Store,
	executionId: string,
	ending: 'failed' | 'crashed' | 'stopped',
): Promise<number> {
	const [{ reports }] = await store.query<{ reports: number }>(
		recordExecutionReportSql(store, { executionId, ending }),
	);
	return reports;
}

/** Where an execution that no error workflow settles ended, for the letters of its items. */
export interface StoppedExecution {
	executionId: string;
	workflowId?: string;
	workflowName?: string;
	/** The node that was running when it ended (or the last that ran). */
	step?: string;
	runLink?: string;
	/** Why it ended, as n8n says (Stop, the API, a timeout, a worker's drain; the error), when it says. */
	reason?: string;
}

/**
 * A cancelled execution (n8n's Stop, the API's stop, a workflow timeout, a worker's drain) runs
 * no error workflow, so its end-of-execution hook settles it: each item the inbox kept for it is
 * parked as stopped (the letter first, so a failure between the two leaves the claim to Recover,
 * never an item in no letter), then its claims are failed; its open write keys are marked, its
 * claims of the other modes released (a redelivery is new), and the execution recorded as
 * settled, so an error workflow n8n may still run for it parks nothing twice.
 */
export async function stopExecution(
	store: Store,
	stop: StoppedExecution,
): Promise<{ parked: ParkResult[]; released: number }> {
	return await settleInProcess(store, stop, 'stopped', {
		errorClass: ErrorClass.stopped,
		message:
			stop.reason ??
			'the execution was stopped before it finished (the Stop button, the API, a workflow timeout or a worker shutting down)',
		alreadyHappened: (step) => `steps before ${step} ran; ${step} was stopped while it ran`,
		impact: 'the event was received but its work was stopped before it finished',
	});
}

/**
 * A failed execution for which n8n runs no error workflow (its workflow names none), so nothing
 * would park its items: the inbox would keep them failed until a redelivery that a sender who had
 * its 2xx never makes. Its end-of-execution hook settles it as the Error handler would: each
 * kept item parked with the error (class `execution`, its alert due: Recover sends it), its
 * claims failed, its open write keys marked, and the execution recorded as settled.
 */
export async function failExecutionWithoutHandler(
	store: Store,
	failure: StoppedExecution,
): Promise<{ parked: ParkResult[]; released: number }> {
	return await settleInProcess(store, failure, 'failed', {
		errorClass: ErrorClass.execution,
		message: failure.reason ?? 'the execution failed',
		alreadyHappened: failedAfter,
		impact:
			'the event was received but its work did not finish, and the workflow has no error workflow to report it',
	});
}

/**
 * What had happened to an item of an execution that failed at `step`: the steps before it ran,
 * and writes whose outcome is unknown (their keys marked so when it failed) may have taken effect.
 */
export function failedAfter(step: string, unknownWrites: number): string {
	return unknownWrites > 0
		? `steps before ${step} ran; ${unknownWrites} write${unknownWrites === 1 ? '' : 's'} may have taken effect: check before replaying`
		: `steps before ${step} ran`;
}

/** The letter an execution's kept items get when it is settled in the process that ran it. */
interface InProcessLetter {
	errorClass: ErrorClass;
	message: string;
	alreadyHappened: (step: string, unknownWrites: number) => string;
	impact: string;
}

async function settleInProcess(
	store: Store,
	end: StoppedExecution,
	ending: 'stopped' | 'failed',
	letter: InProcessLetter,
): Promise<{ parked: ParkResult[]; released: number }> {
	// Settled before (an error workflow that ran after all): nothing to park twice.
	if (await executionReported(store, end.executionId)) return { parked: [], released: 0 };
	const keys = await abandonExecutionKeys(store, end.executionId);
	const unknownWrites = keys.filter((k) => k.status === KeyStatus.unknown).length;
	const items = (
		await store.query<InboxRow>(inboxOfExecutionSql(store, { executionId: end.executionId }))
	).map(toItem);
	const step = end.step ?? 'unknown step';
	// All or none: an item not parked keeps its claim, for Recover.
	const parked = parkedOrThrow(
		await parkItems(
			store,
			items.map((item) => ({
				workflowId: end.workflowId ?? item.workflowId ?? 'unknown',
				workflowName: end.workflowName,
				executionId: end.executionId,
				step,
				idempotencyKey: eventLetterKey(item.consumer, item.eventId),
				businessId: item.eventId,
				runLink: end.runLink,
				errorClass: letter.errorClass,
				errorMessage: letter.message,
				alreadyHappened: letter.alreadyHappened(step, unknownWrites),
				impact: letter.impact,
				payload: keptPayload(item),
				// No workflow runs after this end to alert it: Recover sends the alert.
				alertLater: true,
			})),
		),
	);
	await store.execute(
		failExecutionClaimsSql(store, { executionId: end.executionId, message: letter.message }),
	);
	const [{ released }] = await store.query<{ released: number }>(
		releaseExecutionSql(store, { executionId: end.executionId }),
	);
	await recordExecutionReport(store, end.executionId, ending);
	return { parked, released };
}

export interface RecoveredItem extends InboxItem {
	generation: string;
	/** How many times Recover has taken it (this one included). */
	attempt: number;
	/** Given up: failed, to be parked as crashed, with why. */
	givenUp: boolean;
	reason: string | null;
	/** What the origin execution's write steps did (step, status), for "already happened". */
	steps: Array<{ step: string; status: KeyStatus }>;
}

/**
 * Takes the inbox claims whose execution died, for one recovery run: re-run (each counted) or,
 * after `maxAttempts`, given up. Fenced, so two recoverers never take one claim; the run later
 * completes a re-run claim with Complete (this execution holds it).
 */
export async function takeCrashed(
	store: Store,
	take: {
		executionId: string;
		limit: number;
		maxAttempts: number;
		leaseSeconds: number;
		workflowId?: string;
	},
): Promise<RecoveredItem[]> {
	const rows = await store.query<
		InboxRow & {
			generation: string;
			recover_attempts: number;
			status: ProcessedEventStatus;
			last_error: string | null;
			steps: Array<{ step: string; status: KeyStatus }>;
		}
	>(
		takeCrashedSql(store, {
			executionId: take.executionId,
			limit: take.limit,
			maxAttempts: take.maxAttempts,
			leaseSeconds: take.leaseSeconds,
			workflowId: take.workflowId ?? null,
		}),
	);
	return rows.map((row) => ({
		...toItem(row),
		generation: String(row.generation),
		attempt: row.recover_attempts,
		givenUp: row.status === ProcessedEventStatus.failed,
		reason: row.status === ProcessedEventStatus.failed ? row.last_error : null,
		steps: row.steps,
	}));
}

/** A re-run that failed: the item goes back to Recover now (fenced by the run that holds it). */
export async function returnToRecovery(
	store: Store,
	item: { consumer: string; eventId: string; executionId: string; message: string },
): Promise<void> {
	await store.execute(
		returnToRecoverySql(store, {
			consumer: item.consumer,
			eventId: item.eventId,
			executionId: item.executionId,
			message: item.message,
		}),
	);
}
