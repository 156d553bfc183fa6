import type { Store, Transaction } from '../store';
import { applySettlesSql, lockMessagesSql } from './sql';
import { OutboxStatus, MessageSettleOutcome } from './statuses';
import type { MessageRow } from './take';

/** Complete or Fail names a message by id and by the generation its taker holds. */
export interface MessageSettleRequest {
	/** The input item's index, carried through so outputs and errors keep it. */
	index: number;
	id: string;
	generation: number;
}

export interface FailRequest extends MessageSettleRequest {
	/** Idempotent HTTP Write's failure class (transient, exhausted, permanent, ...). */
	errorClass: string;
	message?: string;
	status?: number;
	/** Not before this time (the target's Retry-After). */
	retryAt?: Date;
}

export interface MessageSettleResult {
	index: number;
	id: string;
	generation: number;
	outcome: MessageSettleOutcome;
	/** The message's status afterwards (absent when it does not exist). */
	status?: OutboxStatus;
	/** The generation the message is at, when it moved on past the request's. */
	currentGeneration?: number;
	/** The owner of that generation. */
	takenBy?: string | null;
	attempt?: number;
	/** When a retried message becomes takeable again. */
	availableAt?: Date;
	deadLetterId?: string;
	/** The class it was parked with (the failure's own, or exhausted past the attempt cap). */
	deadLetterClass?: string;
}

type LockedRow = MessageRow;

export interface Plan {
	id: string;
	action: 'complete' | 'retry' | 'dead' | null;
	delay_ms?: number;
	retry_at?: string | null;
	error_class?: string;
	error?: string | null;
	error_status?: number | null;
	dead_letter_id?: string;
	/** The take that ended in a hold does not count as an attempt. */
	refund_attempt?: boolean;
	superseded: number;
}

/** What the caller decided for one message still in flight under the generation its request names. */
type Choice =
	| { action: 'complete' }
	| { action: 'retry'; delayMs: number; failure: FailRequest; hold: boolean }
	| { action: 'dead'; errorClass: string; failure: FailRequest };

const ID = /^\d{1,18}$/;

/**
 * Lock, decide, apply, in one transaction: the rows named by the requests are locked, each
 * request is checked against the generation it names (a moved-on generation is superseded,
 * counted on the message and reported), decisions for messages still in flight under that
 * generation are applied, and messages given up are parked before the transaction commits.
 */
export async function settleMessages<R extends MessageSettleRequest>(
	outbox: Store,
	requests: R[],
	choose: (row: LockedRow, request: R) => Choice,
	park?: (
		tx: Transaction,
		dead: Array<{ row: LockedRow; failure: FailRequest; errorClass: string }>,
	) => Promise<string[]>,
): Promise<MessageSettleResult[]> {
	const ids = [...new Set(requests.filter((r) => ID.test(r.id)).map((r) => r.id))];
	if (ids.length === 0)
		return requests.map((r) => ({ ...base(r), outcome: MessageSettleOutcome.notFound }));
	return await outbox.transaction(async (tx) => {
		const rows = new Map(
			(await tx.query<LockedRow>(lockMessagesSql(outbox, { ids }))).map((row) => [row.id, row]),
		);
		const plans = new Map<string, Plan>();
		const planOf = (id: string): Plan => {
			let plan = plans.get(id);
			if (!plan) plans.set(id, (plan = { id, action: null, superseded: 0 }));
			return plan;
		};
		const results: MessageSettleResult[] = [];
		const dead: Array<{
			row: LockedRow;
			failure: FailRequest;
			errorClass: string;
			result: MessageSettleResult;
		}> = [];
		for (const request of requests) {
			const row = rows.get(request.id);
			if (!row || !ID.test(request.id)) {
				results.push({ ...base(request), outcome: MessageSettleOutcome.notFound });
				continue;
			}
			if (row.generation !== request.generation) {
				planOf(row.id).superseded += 1;
				results.push({
					...base(request),
					outcome: MessageSettleOutcome.superseded,
					status: row.status,
					currentGeneration: row.generation,
					takenBy: row.taken_by,
					attempt: row.attempts,
				});
				continue;
			}
			if (row.status !== OutboxStatus.inFlight) {
				results.push({
					...base(request),
					outcome: MessageSettleOutcome.alreadySettled,
					status: row.status,
					attempt: row.attempts,
				});
				continue;
			}
			const choice = choose(row, request);
			const plan = planOf(row.id);
			const result: MessageSettleResult = {
				...base(request),
				outcome: MessageSettleOutcome.completed,
			};
			result.attempt = row.attempts;
			if (choice.action === 'complete') {
				plan.action = 'complete';
				row.status = OutboxStatus.done;
			} else {
				const { failure } = choice;
				plan.error = failure.message ?? null;
				plan.error_status = failure.status ?? null;
				if (choice.action === 'retry') {
					Object.assign(plan, {
						action: 'retry',
						delay_ms: choice.delayMs,
						retry_at: failure.retryAt?.toISOString() ?? null,
						error_class: failure.errorClass,
						refund_attempt: choice.hold,
					});
					row.status = OutboxStatus.pending;
					result.outcome = choice.hold
						? MessageSettleOutcome.held
						: MessageSettleOutcome.retryScheduled;
				} else {
					Object.assign(plan, { action: 'dead', error_class: choice.errorClass });
					row.status = OutboxStatus.dead;
					result.outcome = MessageSettleOutcome.dead;
					result.deadLetterClass = choice.errorClass;
					dead.push({ row, failure, errorClass: choice.errorClass, result });
				}
			}
			results.push(result);
		}
		if (dead.length > 0 && park) {
			const letterIds = await park(tx, dead);
			dead.forEach((d, i) => {
				d.result.deadLetterId = letterIds[i];
				planOf(d.row.id).dead_letter_id = letterIds[i];
			});
		}
		const applied = new Map<
			string,
			{ status: OutboxStatus; available_at: Date; attempts: number }
		>();
		if (plans.size > 0) {
			const changed = await tx.query<{
				id: string;
				status: OutboxStatus;
				available_at: Date;
				attempts: number;
			}>(applySettlesSql(outbox, { plans: [...plans.values()] }));
			for (const row of changed) applied.set(row.id, row);
		}
		for (const result of results) {
			if (
				result.outcome === MessageSettleOutcome.completed ||
				result.outcome === MessageSettleOutcome.retryScheduled ||
				result.outcome === MessageSettleOutcome.held ||
				result.outcome === MessageSettleOutcome.dead
			) {
				const after = applied.get(result.id);
				result.status = after?.status;
				if (
					result.outcome !== MessageSettleOutcome.completed &&
					result.outcome !== MessageSettleOutcome.dead
				)
					result.availableAt = after?.available_at;
				if (result.outcome === MessageSettleOutcome.held) result.attempt = after?.attempts;
			}
		}
		return results;
	});
}

const base = (request: MessageSettleRequest) => ({
	index: request.index,
	id: request.id,
	generation: request.generation,
});

/** Marks messages sent. A repeat by the same generation changes nothing; an older generation is superseded. */
export async function completeMessages(
	outbox: Store,
	requests: MessageSettleRequest[],
): Promise<MessageSettleResult[]> {
	return await settleMessages(outbox, requests, () => ({ action: 'complete' }));
}
