import { closeDoneEventLetters } from '../deadletter/status';
import { abandonExecutionKeys } from '../idempotency/recovery';
import { KeyStatus } from '../idempotency/types';
import type { Store } from '../store';
import { ProcessedEventStatus } from './outcomes';
import {
	callersHoldItemSql,
	claimExecutionReportSql,
	releaseExecutionReportSql,
	coverLapsedSubClaimsSql,
	completeExecutionSql,
	countInboxOfExecutionSql,
	endExecutionLeasesSql,
	failedClaimsOfExecutionSql,
	failExecutionClaimsSql,
	holdExecutionClaimsSql,
	markRerunSql,
	handRerunToWaitSql,
	recordRerunSql,
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

export interface InboxItem {
	consumer: string;
	eventId: string;
	workflowId: string | null;
	originExecutionId: string | null;
	payload: unknown;
	/** Set when the item was over the inbox cap and was not kept. */
	payloadBytes: number | null;
}

export type InboxRow = {
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

export const toItem = (row: InboxRow): InboxItem => ({
	consumer: row.consumer,
	eventId: row.event_id,
	workflowId: row.workflow_id,
	originExecutionId: row.origin_execution_id,
	payload: row.payload,
	payloadBytes: row.payload_bytes,
});

/**
 * How often Recover asks n8n about an execution that waits, at most: a wait for a webhook call
 * has no end, and a person may stop or delete a waiting execution, which no hook reports.
 */
export const WAIT_ASK_EVERY_SECONDS = 600;

/** Settles an execution's claims by how it ended (the end-of-execution hook, in its own process). */
export async function settleExecutionClaims(
	store: Store,
	executionId: string,
	end: {
		status: ExecutionEnd;
		message?: string;
		waitTill?: Date;
		leaseSeconds?: number;
		/** For a wait: what it means when n8n has no record of the execution after its resume. */
		ifGone?: 'done' | 'check';
		/** For a wait: the longest its run may take after it (the workflow's timeout). */
		runLimitSeconds?: number;
	},
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
					ifGone: end.ifGone ?? 'check',
					askEverySeconds: WAIT_ASK_EVERY_SECONDS,
					runLimitSeconds: end.runLimitSeconds ?? null,
				}),
			);
			return;
		case ExecutionEnd.crashed:
			await store.execute(
				endExecutionLeasesSql(store, { executionId, message: end.message ?? null }),
			);
			return;
		default:
			// Failed with their items, and nothing holds them yet: an error workflow parks them, or
			// Recover's sweep does.
			await store.execute(
				failExecutionClaimsSql(store, { executionId, message: end.message ?? null }),
			);
	}
}

export interface FailedExecution {
	/**
	 * The execution's ending was settled already, or is being settled (by its end-of-execution
	 * hook, or n8n reporting a crash again): nothing was settled, parked or is to be alerted now.
	 */
	repeated: boolean;
	/** Inbox items of a failed execution, for the error workflow to park with their payloads. */
	items: InboxItem[];
	/**
	 * Items of a failed sub-workflow execution that an item of the execution that called it holds
	 * (its letter, or its recovery, is theirs too): not to be parked on their own.
	 */
	heldAbove: number;
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
 * The error workflow's step for a failed or crashed execution, if it is the first to settle it
 * (claimExecutionReport): its in-progress write keys are marked at once (a redelivery or a
 * recovery reconciles them now, instead of waiting out a lease), its inbox claims are failed with
 * their items (to park) or, for a crash, left to Recover; claims of the other modes are released.
 * A crash whose claims its own end-of-execution hook failed did end in its process: those items
 * are parked. An execution settled before (by its own end-of-execution hook, or n8n reporting a
 * crash again) is settled no more: `repeated`, and nothing to park or alert.
 */
export async function failExecution(
	store: Store,
	execution: {
		executionId: string;
		crashed: boolean;
		message?: string;
		/**
		 * The executions that called it (n8n's context names the parent of a sub-workflow's run,
		 * and Recover's re-run names Recover's run): when one holds an item, a failed run that kept
		 * none of its own is that item's failure (`heldAbove`), not a record of its own.
		 */
		callers?: string[];
	},
): Promise<FailedExecution> {
	const ending = execution.crashed ? 'crashed' : 'failed';
	if (!(await claimExecutionReport(store, execution.executionId, ending)))
		return {
			repeated: true,
			items: [],
			heldAbove: 0,
			recovering: 0,
			kept: 0,
			released: 0,
			keys: [],
		};
	const keys = await abandonExecutionKeys(store, execution.executionId);
	let rows: Array<InboxRow & { held_above: boolean }> = [];
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
		rows = (
			await store.query<InboxRow>(
				failedClaimsOfExecutionSql(store, {
					executionId: execution.executionId,
					message: execution.message ?? null,
				}),
			)
		).map((row) => ({ ...row, held_above: false }));
	} else {
		rows = await store.query<InboxRow & { held_above: boolean }>(
			failExecutionClaimsSql(store, {
				executionId: execution.executionId,
				message: execution.message ?? null,
			}),
		);
	}
	const [{ released }] = await store.query<{ released: number }>(
		releaseExecutionSql(store, { executionId: execution.executionId }),
	);
	const [{ kept }] = await store.query<{ kept: number }>(
		countInboxOfExecutionSql(store, { executionId: execution.executionId }),
	);
	const callers = (execution.callers ?? []).filter((id) => id !== execution.executionId);
	const callerHolds =
		rows.length === 0 && kept === 0 && callers.length > 0
			? (await store.query<{ held: boolean }>(callersHoldItemSql(store, { callers })))[0].held
			: false;
	return {
		repeated: false,
		items: rows.filter((row) => !row.held_above).map(toItem),
		heldAbove: rows.filter((row) => row.held_above).length + (callerHolds ? 1 : 0),
		recovering,
		kept,
		released,
		keys,
	};
}

/** Gives up a claim of an execution's settlement that settled nothing (its park failed). */
export async function releaseExecutionReport(store: Store, executionId: string): Promise<void> {
	await store.execute(releaseExecutionReportSql(store, { executionId }));
}

/**
 * Claims the settlement of an execution's ending for the caller: true for the first settler,
 * which settles it; false for every later one (the ending was settled, or is being settled, by
 * another: its end-of-execution hook, the error workflow, n8n reporting a crash again), which
 * settles nothing. Claimed before settling, so two settlers never both park: one that fails
 * half-way leaves its claims to what follows every settler (a claim still in progress lapses to
 * Recover; a failed one nothing holds is parked by Recover's sweep).
 */
export async function claimExecutionReport(
	store: Store,
	executionId: string,
	ending: 'failed' | 'crashed' | 'stopped',
): Promise<boolean> {
	const [{ first }] = await store.query<{ first: boolean }>(
		claimExecutionReportSql(store, { executionId, ending }),
	);
	return first;
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
	// Sub-workflow claims that died with their caller, whose caller's item is settled: held by it.
	await store.execute(coverLapsedSubClaimsSql(store, { workflowId: take.workflowId ?? null }));
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

/**
 * A recovery run starts re-running an item it holds (fenced by the run): see markRerunSql.
 * False when the run no longer holds it (another recovery run took it): it is not re-run here.
 */
export async function markRerun(
	store: Store,
	item: { consumer: string; eventId: string; executionId: string },
): Promise<boolean> {
	return (await store.execute(markRerunSql(store, item))).rowCount > 0;
}

/** A recovery run's re-run of an item returned or failed: see recordRerunSql. */
export async function recordRerun(
	store: Store,
	item: { consumer: string; eventId: string; executionId: string; rerunExecution: string },
): Promise<void> {
	await store.execute(recordRerunSql(store, item));
}

/** A recovery run's re-run returned waiting: the item is the re-run's, held (handRerunToWaitSql). */
export async function handRerunToWait(
	store: Store,
	item: {
		consumer: string;
		eventId: string;
		executionId: string;
		rerunExecution: string;
		waitTill: Date;
	},
): Promise<void> {
	await store.execute(
		handRerunToWaitSql(store, { ...item, askEverySeconds: WAIT_ASK_EVERY_SECONDS }),
	);
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
