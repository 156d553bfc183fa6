import { type ParkRequest, type ParkResult } from '../deadletter/park';
import { appendEvidence } from '../deadletter/status';
import { ErrorClass } from '../deadletter/statuses';
import { runLink } from '../runLink';
import type { Store } from '../store';
import { eventLetterKey } from './eventIds';
import { failExecutionInProcess, settleExecutionEnd } from './executionEnd';
import { parkEachPlainIfRefused } from './keptLetters';
import {
	ExecutionEnd,
	type InboxRow,
	keptPayload,
	settleExecutionClaims,
	toItem,
	WAIT_ASK_EVERY_SECONDS,
} from './inbox';
import {
	endExecutionLeasesSql,
	extendWaitSql,
	markParkedSql,
	resumeExecutionClaimsSql,
	takeUnsettledSql,
	waitingExecutionsSql,
} from './sql';

/**
 * What Recover does every minute besides re-running crashed items, so that every claim ends in
 * a letter or done whatever the user configured: it parks failed claims that nothing holds (an
 * error workflow of the user's that parked nothing, a settler that died half-way, a sub-workflow
 * whose caller went on without it), and it asks n8n how each execution that waited (a Wait n8n
 * offloaded, resumed with new hooks in another process) ended, and settles its claims so.
 */

/** How long a failed claim waits for the settler that failed it to park it, before the sweep does. */
const SWEEP_GRACE_SECONDS = 60;
/** How long a sweep holds a claim it parks, so that a second sweep does not park it too. */
const SWEEP_TAKE_SECONDS = 300;

/** A claim the sweep parked, with its letter. */
export interface SweptClaim {
	consumer: string;
	eventId: string;
	request: ParkRequest;
	result: ParkResult;
}

/**
 * Parks up to `limit` failed claims (of `workflowId`, or all) that nothing holds, failed more than
 * the grace ago: one letter per item, with the error and the step its execution failed at and
 * the run link, then marks them parked. Returns the letters, for the alert.
 */
export async function parkUnsettledClaims(
	store: Store,
	input: { limit: number; workflowId?: string; baseUrl?: string; graceSeconds?: number },
): Promise<SweptClaim[]> {
	const taken = await store.query<
		InboxRow & {
			execution_id: string | null;
			last_error: string | null;
			failed_step: string | null;
			in_sub_workflow: boolean;
			verdict: 'park' | 'letter';
			letter_above: string | null;
		}
	>(
		takeUnsettledSql(store, {
			limit: input.limit,
			graceSeconds: input.graceSeconds ?? SWEEP_GRACE_SECONDS,
			workflowId: input.workflowId ?? null,
			takeSeconds: SWEEP_TAKE_SECONDS,
		}),
	);
	// A sub-workflow's item whose caller went on and parked a letter of the item (a write's): that
	// letter is the item's, and says that the sub-workflow failed too.
	for (const row of taken.filter((r) => r.verdict === 'letter' && r.letter_above !== null))
		await appendEvidence(
			store,
			String(row.letter_above),
			'Recover',
			`the item's sub-workflow failed too (event ${row.event_id} of ${row.consumer}${row.failed_step ? `, at ${row.failed_step}` : ''}): ${row.last_error ?? 'its execution failed'}`,
		);
	const rows = taken.filter((r) => r.verdict === 'park');
	if (rows.length === 0) return [];
	const requests = rows.map((row): ParkRequest => {
		const item = toItem(row);
		const step = row.failed_step ?? 'unknown step';
		return {
			workflowId: row.workflow_id ?? 'unknown',
			executionId: row.execution_id ?? row.origin_execution_id ?? undefined,
			step,
			idempotencyKey: eventLetterKey(item.consumer, item.eventId),
			businessId: item.eventId,
			runLink:
				input.baseUrl === undefined
					? undefined
					: runLink(input.baseUrl, row.workflow_id, row.execution_id ?? row.origin_execution_id),
			errorClass: ErrorClass.execution,
			errorMessage: row.last_error ?? 'its execution failed',
			alreadyHappened: row.in_sub_workflow
				? `steps before ${step} ran, in a sub-workflow; the workflow that called it went on without it`
				: `steps before ${step} ran`,
			impact: 'the event was received but its work did not finish, and nothing had parked it',
			payload: keptPayload(item),
		};
	});
	const parked = await parkEachPlainIfRefused(store, requests);
	const swept = rows
		.map((row, i) => ({ consumer: row.consumer, eventId: row.event_id, ...parked[i] }))
		.filter((claim): claim is SweptClaim => claim.result !== undefined);
	await store.execute(
		markParkedSql(store, {
			consumers: swept.map((claim) => claim.consumer),
			eventIds: swept.map((claim) => claim.eventId),
		}),
	);
	return swept;
}

/** An execution whose claims waited and whose hold lapsed: n8n is to be asked how it ended. */
export interface WaitingExecution {
	executionId: string;
	workflowId: string | null;
	/** Until when it was to wait, as its end-of-execution hook said. */
	waitTill: Date;
	/** The longest its run may take after the wait (its workflow's timeout), when it has one. */
	runLimitSeconds: number | null;
	/** Whether an execution n8n has no record of any more needs a person (see ExecutionEnding.ifGone). */
	checkIfGone: boolean;
}

export async function waitingExecutions(
	store: Store,
	input: { limit: number; workflowId?: string },
): Promise<WaitingExecution[]> {
	const rows = await store.query<{
		execution_id: string;
		workflow_id: string | null;
		waiting_till: Date;
		run_limit_seconds: number | null;
		check_if_gone: boolean;
	}>(waitingExecutionsSql(store, { limit: input.limit, workflowId: input.workflowId ?? null }));
	return rows.map((row) => ({
		executionId: row.execution_id,
		workflowId: row.workflow_id,
		waitTill: new Date(row.waiting_till),
		runLimitSeconds: row.run_limit_seconds,
		checkIfGone: row.check_if_gone,
	}));
}

/** What n8n's saved record says of an execution that waited, read by the caller. */
export type WaitedExecution =
	/** It still waits (until `waitTill`, when its record says), or it resumed and runs. */
	| { state: 'waiting'; waitTill?: Date }
	| { state: 'success' }
	| { state: 'failed'; canceled: boolean; message?: string; step?: string }
	/** n8n has no record of it: it ended, and the workflow's settings kept none. */
	| { state: 'gone' }
	/** n8n cannot be asked (an n8n without the lookup): its items go to Recover, as a crash's. */
	| { state: 'unknown' };

/**
 * How long after its wait ended an execution may still run before its claims are taken as
 * crashed (n8n died during the resumed run, or while it was being saved as waiting, and marked it
 * crashed without saving it): its workflow's timeout when it sets one, else an hour, plus the
 * minute n8n may take to resume it. Recover then runs the items again, where steps that already
 * succeeded return their saved results.
 */
const MAX_RESUMED_RUN_MS = 3600_000;
const RESUME_MARGIN_MS = 90_000;
/** How soon n8n is asked again about an execution that still waits or runs. */
const WAIT_RECHECK_MS = 60_000;

/**
 * Settles the claims of an execution that waited by what n8n says of it: one that still waits
 * or runs is held and asked about again; one that succeeded is done; one that failed or was
 * stopped has its items parked (unless the error workflow settled it first); one n8n kept no
 * record of is done when its workflow saves every failure and no success, and parked for a
 * person to check otherwise. Returns what became of its claims.
 */
export async function settleWaitedExecution(
	store: Store,
	waiting: WaitingExecution,
	said: WaitedExecution,
	at: { runLink?: string; now?: Date },
): Promise<'held' | 'done' | 'parked' | 'recovering'> {
	const now = at.now ?? new Date();
	switch (said.state) {
		case 'unknown':
			await store.execute(
				endExecutionLeasesSql(store, {
					executionId: waiting.executionId,
					message: 'it waited, and n8n cannot say how it ended: run again',
				}),
			);
			return 'recovering';
		case 'waiting': {
			const waitTill = said.waitTill ?? waiting.waitTill;
			const runLimitMs =
				waiting.runLimitSeconds !== null && waiting.runLimitSeconds > 0
					? waiting.runLimitSeconds * 1000
					: MAX_RESUMED_RUN_MS;
			if (now.getTime() - waitTill.getTime() > runLimitMs + RESUME_MARGIN_MS) {
				await store.execute(
					endExecutionLeasesSql(store, {
						executionId: waiting.executionId,
						message: `its Wait ended at ${waitTill.toISOString()}, and n8n's record shows no run after it for longer than the run may take: taken as crashed`,
					}),
				);
				return 'recovering';
			}
			// Asked again once the wait is over, and meanwhile at most WAIT_ASK_EVERY_SECONDS apart.
			const askAt = Math.min(
				Math.max(now.getTime(), waitTill.getTime()) + WAIT_RECHECK_MS,
				now.getTime() + WAIT_ASK_EVERY_SECONDS * 1000,
			);
			await store.execute(
				extendWaitSql(store, { executionId: waiting.executionId, holdUntil: new Date(askAt) }),
			);
			return 'held';
		}
		case 'success':
			await settleExecutionClaims(store, waiting.executionId, { status: ExecutionEnd.success });
			return 'done';
		case 'failed':
			await settleExecutionEnd(store, {
				executionId: waiting.executionId,
				status: said.canceled ? 'canceled' : 'error',
				step: said.step,
				reason: said.message,
				runLink: at.runLink,
				errorWorkflowNamed: true,
			});
			return 'parked';
		case 'gone': {
			// Gone before its wait was over: it resumed early (a webhook's or a form's call) and its
			// success was not saved, or a person deleted it while it waited; a person checks. After,
			// it is what its workflow's save settings say.
			const beforeItsEnd = now.getTime() < waiting.waitTill.getTime();
			if (!waiting.checkIfGone && !beforeItsEnd) {
				await settleExecutionClaims(store, waiting.executionId, { status: ExecutionEnd.success });
				return 'done';
			}
			await failExecutionInProcess(store, {
				executionId: waiting.executionId,
				runLink: at.runLink,
				step: 'after its Wait',
				reason: beforeItsEnd
					? 'n8n has no record of this execution any more, and its Wait was not over: it resumed early (a call to its webhook or form) and its success was not saved, or a person deleted it while it waited: check whether its work was done before replaying'
					: 'n8n has no record of how this execution ended after it resumed from its Wait (its workflow does not save such runs): check whether its work was done before replaying',
			});
			return 'parked';
		}
	}
}

/**
 * A node of the package runs in an execution that resumed after a Wait, with new lifecycle hooks:
 * the execution's claims are held by this process from now on (no longer waiting), for its end
 * to settle. Returns how many claims it holds (0: nothing to hold).
 */
export async function resumeExecutionClaims(
	store: Store,
	executionId: string,
	leaseSeconds: number,
): Promise<number> {
	return (await store.execute(resumeExecutionClaimsSql(store, { executionId, leaseSeconds })))
		.rowCount;
}
