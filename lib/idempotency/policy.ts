/**
 * The retry policy of one write: which outcomes retry, how long to wait (full jitter, or the
 * server's Retry-After when it fits the deadline), and when to stop. Pure functions; the clock
 * and the random source are passed in so tests can pin them.
 */
export interface RetryPolicy {
	maxAttempts: number;
	baseDelayMs: number;
	maxDelayMs: number;
	/** Budget for the whole step, from the first attempt. */
	deadlineMs: number;
	retryOn: number[];
	neverRetry: number[];
	/**
	 * Statuses that mean the target refused the write's precondition (the record changed since
	 * the version the write expected): a conflict for a person, never retried. Default 412.
	 */
	conflictOn?: number[];
	honourRetryAfter: boolean;
}

export const DEFAULT_POLICY: RetryPolicy = {
	maxAttempts: 5,
	baseDelayMs: 2_000,
	maxDelayMs: 60_000,
	deadlineMs: 120_000,
	retryOn: [408, 425, 429, 500, 502, 503, 504],
	neverRetry: [400, 401, 403, 404, 409, 422],
	honourRetryAfter: true,
};

export type ResponseClass = 'success' | 'transient' | 'permanent' | 'conflict';

/**
 * 2xx succeeds; the conflict-on list (412 by default) is a refused precondition; the retry-on
 * list is transient; everything else (the never-retry list, other 4xx, 3xx) is permanent.
 */
export function classifyStatus(
	status: number,
	policy: Pick<RetryPolicy, 'retryOn' | 'neverRetry' | 'conflictOn'>,
): ResponseClass {
	if (status >= 200 && status < 300) return 'success';
	if ((policy.conflictOn ?? [412]).includes(status)) return 'conflict';
	if (policy.neverRetry.includes(status)) return 'permanent';
	if (policy.retryOn.includes(status)) return 'transient';
	return 'permanent';
}

/**
 * Whether a transient answer proves the target did nothing: a refusal before any work (425 Too
 * Early, 429 Too Many Requests) or a 503 that says when to come back (Retry-After). Any other 5xx,
 * a 408 or a status added to the retry list may come after the origin committed (a gateway that
 * gave up waiting for it, an error after the commit): the effect may exist.
 */
export function provesNothingDone(status: number, retryAfterMs: number | undefined): boolean {
	if (status === 425 || status === 429) return true;
	return status === 503 && retryAfterMs !== undefined;
}

/** Full jitter: a random delay between 0 and min(maxDelay, base * 2^(attempt-1)), attempt counted from 1. */
export function nextDelayMs(
	attempt: number,
	policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
	random: () => number = Math.random,
): number {
	const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
	return Math.floor(random() * cap);
}

/** The longest wait a Retry-After can ask for that is still kept as a time (about a year). */
const MAX_RETRY_AFTER_MS = 366 * 24 * 3600 * 1000;

const IMF_FIXDATE =
	/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Retry-After as RFC 9110 has it: delay-seconds (a non-negative integer) or an IMF-fixdate. The
 * wait comes back in milliseconds (capped at about a year); anything else is `invalid` with the
 * text, so the caller falls back to its backoff and notes why.
 */
export function readRetryAfter(
	value: string | string[] | undefined,
	nowMs: number,
): { delayMs?: number; invalid?: string } {
	const text = (Array.isArray(value) ? value[0] : value)?.trim();
	if (!text) return {};
	if (/^\d+$/.test(text)) return { delayMs: Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS) };
	if (IMF_FIXDATE.test(text)) {
		const date = Date.parse(text);
		if (!Number.isNaN(date))
			return { delayMs: Math.min(Math.max(0, date - nowMs), MAX_RETRY_AFTER_MS) };
	}
	return { invalid: text.slice(0, 100) };
}

/** Retry-After as milliseconds from now; undefined when absent or not a valid value. */
export const parseRetryAfter = (
	value: string | string[] | undefined,
	nowMs: number,
): number | undefined => readRetryAfter(value, nowMs).delayMs;

export type RetryDecision =
	| { kind: 'retry'; delayMs: number }
	| { kind: 'rate_limited'; retryAt: Date }
	| { kind: 'exhausted'; reason: string };

/**
 * After a transient failure on `attempt` (counted from 1): wait and retry, park as rate limited
 * (the server asked for longer than the deadline allows), or stop (attempts or deadline spent).
 */
export function decideRetry(
	input: { attempt: number; startedAtMs: number; nowMs: number; retryAfterMs?: number },
	policy: RetryPolicy,
	random: () => number = Math.random,
): RetryDecision {
	const remaining = policy.deadlineMs - (input.nowMs - input.startedAtMs);
	if (policy.honourRetryAfter && input.retryAfterMs !== undefined) {
		if (input.retryAfterMs > remaining)
			return {
				kind: 'rate_limited',
				retryAt: new Date(input.nowMs + Math.min(input.retryAfterMs, MAX_RETRY_AFTER_MS)),
			};
		if (input.attempt >= policy.maxAttempts)
			return { kind: 'exhausted', reason: `gave up after ${input.attempt} attempts` };
		return { kind: 'retry', delayMs: input.retryAfterMs };
	}
	if (input.attempt >= policy.maxAttempts)
		return { kind: 'exhausted', reason: `gave up after ${input.attempt} attempts` };
	const delay = nextDelayMs(input.attempt, policy, random);
	if (delay >= remaining)
		return {
			kind: 'exhausted',
			reason: `deadline of ${Math.round(policy.deadlineMs / 1000)} s reached after ${input.attempt} attempts`,
		};
	return { kind: 'retry', delayMs: delay };
}

/** Node's socket errors that mean the request never reached the target: safe to retry as transient. */
export const NOT_SENT_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
]);
