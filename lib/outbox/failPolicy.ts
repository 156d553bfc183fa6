import { nextDelayMs } from '../idempotency/policy';
import { DEFAULT_HOLD_CLASSES, DEFAULT_TRANSIENT_CLASSES } from './statuses';

/** What Fail does with a failed send: retry it later, hold it while its destination is paused, or give it up. */
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
