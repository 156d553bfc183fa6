/** The life of an outbox message: written pending, taken in flight, then done, retried or dead. */
export const OutboxStatus = {
	pending: 'pending',
	inFlight: 'in_flight',
	done: 'done',
	dead: 'dead',
} as const;
export type OutboxStatus = (typeof OutboxStatus)[keyof typeof OutboxStatus];

/** What a Complete or Fail did to one message. */
export const MessageSettleOutcome = {
	completed: 'completed',
	retryScheduled: 'retry_scheduled',
	/** The destination is paused (or its breaker open): back to pending, the attempt not counted. */
	held: 'held',
	dead: 'dead',
	/** The message was taken again since (its generation moved on): the new owner settles it. */
	superseded: 'superseded',
	/** This generation already settled it (a repeated Complete or Fail); nothing changed. */
	alreadySettled: 'already_settled',
	notFound: 'not_found',
} as const;
export type MessageSettleOutcome = (typeof MessageSettleOutcome)[keyof typeof MessageSettleOutcome];

/** Methods a message may carry: writes only, as Idempotent HTTP Write sends them. */
export const OUTBOX_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type OutboxMethod = (typeof OUTBOX_METHODS)[number];

/**
 * Error classes of Idempotent HTTP Write's Failed output that a later attempt may cure. An unknown
 * outcome is retried because the relay sends the message's own idempotency key again; a write
 * superseded by another owner of the key is retried to learn that owner's result.
 */
export const DEFAULT_TRANSIENT_CLASSES = [
	'transient',
	'exhausted',
	'rate_limited',
	'unknown_outcome',
	'superseded',
];

/**
 * Classes that say the destination was not called because it is paused or its circuit breaker is
 * open: the message waits, without using up an attempt, until the destination is back.
 */
export const DEFAULT_HOLD_CLASSES = ['paused'];
