import { type ParkRequest, type ParkResult } from '../deadletter/park';
import { ErrorClass } from '../deadletter/statuses';
import { abandonExecutionKeys } from '../idempotency/recovery';
import { KeyStatus } from '../idempotency/types';
import type { Store } from '../store';
import { eventLetterKey } from './eventIds';
import {
	claimExecutionReport,
	ExecutionEnd,
	releaseExecutionReport,
	type InboxRow,
	keptPayload,
	settleExecutionClaims,
	toItem,
} from './inbox';
import { parkKeptItems } from './keptLetters';
import { failExecutionClaimsSql, inboxOfExecutionSql, releaseExecutionSql } from './sql';

/**
 * How an execution's end settles its inbox claims, whatever the user configured: the rules the
 * end-of-execution hook follows in the process that ran the execution, and that Recover follows
 * when n8n says how an execution that resumed after a Wait ended.
 *
 * - success: the claims are done (and letters of earlier deliveries of the items close);
 * - waiting: held until the execution may resume, marked as waiting (n8n resumes a long wait with
 *   new hooks: Recover then asks n8n how it ended);
 * - crashed: the leases end, and Recover runs the items again;
 * - stopped (n8n runs no error workflow for a cancel) and failed: each item is parked here, one
 *   letter per item, whatever error workflow the workflow names: one the user made that only
 *   posts to a chat parks nothing, and neither does one n8n suppresses or that is not published.
 *   The first settler of an execution parks (claimExecutionReport): the bundled Error handler,
 *   running at the same time, parks nothing twice. Exceptions: a run from the editor or an
 *   evaluation is left failed (running it again is new); an item of a sub-workflow whose caller
 *   holds an item is left to the caller's letter; a failed run that kept no items is left to the
 *   error workflow its workflow names (it parks one record for the run).
 */
export interface ExecutionEnding {
	executionId: string;
	/** How n8n says it ended: success, error, canceled, crashed or waiting. */
	status: string | undefined;
	workflowId?: string;
	workflowName?: string;
	runLink?: string;
	/** The node it ended at: the one running when it was stopped, the last one that ran when it failed. */
	step?: string;
	/** Why it ended, as n8n says (the error's message; what stopped it). */
	reason?: string;
	waitTill?: Date;
	leaseSeconds?: number;
	/** Started from the editor or an evaluation: n8n runs no error workflow, the person testing sees it. */
	testRun?: boolean;
	/** Its workflow names an error workflow (any: the bundled Error handler or one of the user's). */
	errorWorkflowNamed?: boolean;
	/** For a wait: what it means when n8n has no record of the execution after its resume. */
	ifGone?: 'done' | 'check';
	/** For a wait: the longest the run may take after it, when its workflow sets a timeout. */
	runLimitSeconds?: number;
}

/** How n8n's status for an execution's end reads as an ending of its claims. */
const executionEndOf = (status: string | undefined): ExecutionEnd | 'stopped' =>
	status === 'success'
		? ExecutionEnd.success
		: status === 'waiting'
			? ExecutionEnd.waiting
			: status === 'crashed'
				? ExecutionEnd.crashed
				: status === 'canceled'
					? 'stopped'
					: ExecutionEnd.error;

/** Settles an execution's inbox claims by how it ended (see ExecutionEnding). */
export async function settleExecutionEnd(store: Store, ending: ExecutionEnding): Promise<void> {
	const end = executionEndOf(ending.status);
	// A run from the editor that failed or was stopped: the person testing sees it.
	if (ending.testRun && (end === 'stopped' || end === ExecutionEnd.error)) {
		await store.execute(
			failExecutionClaimsSql(store, {
				executionId: ending.executionId,
				message: ending.reason ?? null,
				step: ending.step ?? null,
				dropped: true,
			}),
		);
		return;
	}
	if (end === 'stopped') {
		await stopExecution(store, ending);
		return;
	}
	if (end !== ExecutionEnd.error) {
		await settleExecutionClaims(store, ending.executionId, {
			status: end,
			message: ending.reason,
			waitTill: ending.waitTill,
			leaseSeconds: ending.leaseSeconds,
			ifGone: ending.ifGone,
			runLimitSeconds: ending.runLimitSeconds,
		});
		return;
	}
	await failExecutionInProcess(store, ending);
}

/** Where an execution that is settled in process ended, for the letters of its items. */
export interface StoppedExecution {
	executionId: string;
	workflowId?: string;
	workflowName?: string;
	/** The node that was running when it ended (or the last that ran). */
	step?: string;
	runLink?: string;
	/** Why it ended, as n8n says (Stop, the API, a timeout, a worker's drain; the error), when it says. */
	reason?: string;
	/** Its workflow names an error workflow (a failed run that kept no items is left to it). */
	errorWorkflowNamed?: boolean;
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
 * A failed execution, settled in the process that ran it: each kept item parked with the error
 * (class `execution`, its alert due: Recover sends it), its claims failed, its open write keys
 * marked, and the execution recorded as settled. Whatever error workflow the workflow names
 * (one of the user's parks nothing), unless the bundled Error handler settled it first. A failed
 * run that kept no items, in a workflow that names an error workflow, is left to that workflow.
 */
export async function failExecutionInProcess(
	store: Store,
	failure: StoppedExecution,
): Promise<{ parked: ParkResult[]; released: number }> {
	return await settleInProcess(store, failure, 'failed', {
		errorClass: ErrorClass.execution,
		message: failure.reason ?? 'the execution failed',
		alreadyHappened: failedAfter,
		impact: 'the event was received but its work did not finish',
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
	const rows = await store.query<InboxRow & { held_above: boolean }>(
		inboxOfExecutionSql(store, { executionId: end.executionId }),
	);
	// A failed run that kept no items: the error workflow its workflow names parks one record.
	if (rows.length === 0 && ending === 'failed' && end.errorWorkflowNamed)
		return { parked: [], released: 0 };
	// Settled first by another (the Error handler, or n8n reporting a crash): nothing parks twice.
	if (!(await claimExecutionReport(store, end.executionId, ending)))
		return { parked: [], released: 0 };
	try {
		return await parkAndFail(store, end, rows, letter);
	} catch (error) {
		// Nothing settled it after all: the next settler (Recover asking again, a lapse) may.
		await releaseExecutionReport(store, end.executionId).catch(() => undefined);
		throw error;
	}
}

async function parkAndFail(
	store: Store,
	end: StoppedExecution,
	rows: Array<InboxRow & { held_above: boolean }>,
	letter: InProcessLetter,
): Promise<{ parked: ParkResult[]; released: number }> {
	const keys = await abandonExecutionKeys(store, end.executionId);
	const unknownWrites = keys.filter((k) => k.status === KeyStatus.unknown).length;
	// A sub-workflow's item that its caller's item holds is left to the caller's letter.
	const own = rows.filter((row) => !row.held_above);
	const step = end.step ?? 'unknown step';
	// All or none: an item not parked keeps its claim, for Recover.
	const parked = await parkKeptItems(
		store,
		own.map(toItem).map((item): ParkRequest => ({
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
		{
			executionId: end.executionId,
			claims: own.map((row) => ({ consumer: row.consumer, eventId: row.event_id })),
			// Failed and marked parked in one statement next.
			mark: false,
		},
	);
	await store.execute(
		failExecutionClaimsSql(store, {
			executionId: end.executionId,
			message: letter.message,
			step,
			parked: {
				consumers: own.map((row) => row.consumer),
				eventIds: own.map((row) => row.event_id),
			},
		}),
	);
	const [{ released }] = await store.query<{ released: number }>(
		releaseExecutionSql(store, { executionId: end.executionId }),
	);
	return { parked, released };
}
