import { type ErrorClass, parkedOrThrow, parkItems, type ParkRequest } from '../deadletter';
import type { Store } from '../store';
import { DEFAULT_FAIL_POLICY, decideFailure, type FailPolicy } from './failPolicy';
import { type FailRequest, type MessageSettleResult, settleMessages } from './settle';
import { messageFromRow } from './take';
import { storeInTransaction } from './transaction';

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
	return await settleMessages<FailRequest>(
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
			// All or none, in the settle's transaction: a message is marked dead only with its letter.
			return parkedOrThrow(parked).map((p) => p.id);
		},
	);
}
