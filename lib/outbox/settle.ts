import { type ErrorClass, parkItems, type ParkRequest } from '../deadletter';
import { nextDelayMs } from '../idempotency/policy';
import type { Store, Transaction } from '../store';
import { type MessageRow, messageFromRow } from './take';
import { applySettlesSql, lockMessagesSql } from './sql';
import { storeInTransaction } from './transaction';
import {
	DEFAULT_HOLD_CLASSES,
	DEFAULT_TRANSIENT_CLASSES,
	OutboxStatus,
	MessageSettleOutcome,
} from './statuses';

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

export interface FailPolicy {
	/** Takes a message gets in all; a transient failure on the last one makes it a dead letter. */
	maxAttempts: number;
	baseDelayMs: number;
	maxDelayMs: number;
	/** Error classes a later attempt may cure; every other class is permanent. */
	transientClasses: string[];
	/** Error classes of a destination that was not called (paused): held, the attempt not counted. */
	holdClasses: string[];
}

export const DEFAULT_FAIL_POLICY: FailPolicy = {
	maxAttempts: 5,
	baseDelayMs: 5_000,
	maxDelayMs: 300_000,
	transientClasses: DEFAULT_TRANSIENT_CLASSES,
	holdClasses: DEFAULT_HOLD_CLASSES,
};

/** How soon a held message is looked at again. */
const HOLD_RECHECK_MS = 60_000;

/** Where and how a message that is given up is parked (the Reliability Store's dead letters). */
export interface DeadLetterTarget {
	store: Store;
	workflowId: string;
	workflowName?: string;
	executionId?: string;
	/** The relay step that failed to deliver (the write node feeding Fail). */
	step: string;
	runLink?: string;
	owner?: string;
	impact?: string;
	severity?: string;
	maskFields?: string[];
	retentionDays?: number;
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

export type FailureDecision =
	| { kind: 'retry'; delayMs: number }
	| { kind: 'hold'; delayMs: number }
	| { kind: 'dead'; errorClass: string };

/**
 * After a failed send on take `attempts` (counted from 1): a paused destination holds the
 * message (checked again within a minute, the attempt not counted: a pause must not exhaust
 * it); a permanent class is given up at once; a transient one is retried with full-jitter
 * backoff until the attempt cap, then given up as exhausted. Nothing retries forever.
 */
export function decideFailure(
	attempts: number,
	errorClass: string,
	policy: FailPolicy,
	random: () => number = Math.random,
): FailureDecision {
	if (policy.holdClasses.includes(errorClass))
		return { kind: 'hold', delayMs: Math.min(policy.maxDelayMs, HOLD_RECHECK_MS) };
	if (!policy.transientClasses.includes(errorClass)) return { kind: 'dead', errorClass };
	if (attempts >= policy.maxAttempts) return { kind: 'dead', errorClass: 'exhausted' };
	return { kind: 'retry', delayMs: nextDelayMs(attempts, policy, random) };
}

type LockedRow = MessageRow;

interface Plan {
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
async function settle<R extends MessageSettleRequest>(
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
			(await tx.query<LockedRow>(lockMessagesSql(outbox), [ids])).map((row) => [row.id, row]),
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
			}>(applySettlesSql(outbox), [JSON.stringify([...plans.values()])]);
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
	return await settle(outbox, requests, () => ({ action: 'complete' }));
}

/**
 * Records failed sends: a transient failure schedules the message again after a backoff (never
 * before the target's Retry-After); past the attempt cap, or on a permanent failure, the message
 * becomes a dead letter (its full content as payload, its key, the failure) and is marked dead.
 * When the outbox lives in the store's own database the dead letter is written in the same
 * transaction; elsewhere it is written first, while the message stays locked, so a crash between
 * the two leaves the message in flight, taken again after its lease, and parked again as the
 * same open record (same key), never a message gone without its dead letter.
 */
export async function failMessages(
	outbox: Store,
	requests: FailRequest[],
	deadLetters: DeadLetterTarget,
	policy: FailPolicy = DEFAULT_FAIL_POLICY,
	random: () => number = Math.random,
): Promise<MessageSettleResult[]> {
	return await settle<FailRequest>(
		outbox,
		requests,
		(row, request) => {
			const decision = decideFailure(row.attempts, request.errorClass, policy, random);
			return decision.kind === 'dead'
				? { action: 'dead', errorClass: decision.errorClass, failure: request }
				: {
						action: 'retry',
						delayMs: decision.delayMs,
						failure: request,
						hold: decision.kind === 'hold',
					};
		},
		async (tx, dead) => {
			const parkStore =
				deadLetters.store === outbox ? storeInTransaction(outbox, tx) : deadLetters.store;
			const parked = await parkItems(
				parkStore,
				dead.map(({ row, failure: request, errorClass }): ParkRequest => {
					const message = messageFromRow(row);
					return {
						workflowId: deadLetters.workflowId,
						workflowName: deadLetters.workflowName,
						executionId: deadLetters.executionId,
						step: `${deadLetters.step} (${message.destination})`,
						itemIndex: request.index,
						idempotencyKey: message.idempotencyKey,
						runLink: deadLetters.runLink,
						integration: message.destination,
						errorClass: errorClass as ErrorClass,
						errorMessage:
							errorClass === 'exhausted'
								? `Gave up after ${row.attempts} attempts; last: ${request.message ?? request.errorClass}`
								: (request.message ?? request.errorClass),
						errorStatus: request.status,
						attempts: row.attempts,
						alreadyHappened: 'business change committed; outbox message not delivered',
						impact: deadLetters.impact ?? `message to ${message.destination} not delivered`,
						owner: deadLetters.owner,
						severity: deadLetters.severity,
						payload: {
							outboxMessageId: message.id,
							destination: message.destination,
							method: message.method,
							url: message.url,
							headers: message.headers,
							body: message.body,
							idempotencyKey: message.idempotencyKey,
							orderingKey: message.orderingKey ?? null,
							attempts: row.attempts,
							generation: row.generation,
							createdAt: message.createdAt,
						},
						retentionDays: deadLetters.retentionDays,
					};
				}),
				{ maskFields: deadLetters.maskFields },
			);
			return parked.map((p) => p.id);
		},
	);
}
