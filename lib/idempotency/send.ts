import { StoreUnavailableError } from '../errors';
import { LEASE_ENDED } from './fetchSend';
import { lookup } from './lookup';
import { conflictMessage, type ItemOutcomes, type Owned } from './outcomes';
import {
	classifyStatus,
	decideRetry,
	provesNothingDone,
	readRetryAfter,
	type RetryDecision,
} from './policy';
import { targetMessage } from './responses';
import { inFlightGraceOf, leaseOf, timeoutOf } from './runState';
import {
	FailureClass,
	type HttpAnswer,
	type SendResult,
	UnknownOutcomeStrategy,
	type WriteOutcome,
} from './types';

/**
 * The send loop of a record this run owns: retries transient failures inside the deadline.
 * `fromRecord` decides the item again from its record as it now reads, once another execution
 * took the key over. Each attempt's result goes to the handler of its kind, which ends the item
 * or says to send again (after its own wait).
 */
export async function sendLoop(
	item: ItemOutcomes,
	owned: Owned,
	fromRecord: () => Promise<WriteOutcome>,
): Promise<WriteOutcome> {
	const { run, request } = item;
	for (;;) {
		if (run.deps.signal?.aborted) return stopped(item, owned);
		const start = await startAttempt(item, owned);
		if (!start) return await superseded(item, owned, fromRecord);
		// The run stalled between the fence and here, past its lease: another owner may have taken
		// the key over and sent. Ask the fence again rather than send on a lease that ended.
		if (run.now() >= start.validUntil) continue;
		owned.attempt++;
		item.sent++;
		run.progress.sent++;
		const result = await run.deps.send(request, owned.attempt, { notAfter: start.validUntil });
		if (result.kind === 'not_sent' && result.code === LEASE_ENDED) {
			// The run stalled past its lease before the request left: nothing reached the target, so
			// it is neither an attempt nor a failure of the integration (its breaker). The fence is
			// asked again, as for a stall before the send, until the deadline.
			owned.attempt--;
			item.sent--;
			run.progress.sent--;
			item.note({ kind: 'observed', message: result.message });
			if (run.now() < item.deadlineAt) continue;
			return item.definiteFail(owned, {
				class: FailureClass.exhausted,
				message: `${result.message} (deadline)`,
			});
		}
		const next =
			result.kind === 'response'
				? await onResponse(item, owned, start, result.answer)
				: await onNoAnswer(item, owned, start, result);
		if (next !== RESEND) return next;
	}
}

const RESEND = 'resend';

/** What an attempt leads to: the item's outcome, or another attempt. */
type Next = WriteOutcome | typeof RESEND;

/**
 * The target answered. A success or a definite refusal (conflict, permanent) ends the item; a
 * 5xx or 408 that does not prove nothing was done is an unknown outcome unless the target
 * dedupes by key; anything else is retried as the policy allows.
 */
async function onResponse(
	item: ItemOutcomes,
	owned: Owned,
	start: { validUntil: number },
	answer: HttpAnswer,
): Promise<Next> {
	const { run, request, context } = item;
	const status = answer.status;
	const answerClass = classifyStatus(status, context.policy);
	if (answerClass === 'success') {
		item.note({ kind: 'response', status, class: 'success', attempt: owned.attempt });
		run.streak.success();
		return item.succeed(owned, answer);
	}
	const message = targetMessage(answer, context.maskFields);
	if (answerClass === 'conflict') {
		item.note({ kind: 'response', status, class: 'conflict', message, attempt: owned.attempt });
		return item.definiteFail(owned, {
			class: FailureClass.conflict,
			status,
			message: conflictMessage(request, answer, message),
		});
	}
	if (answerClass === 'permanent') {
		item.note({ kind: 'response', status, class: 'permanent', message, attempt: owned.attempt });
		return item.definiteFail(owned, { class: FailureClass.permanent, status, message });
	}
	run.streak.failure();
	const retryAfter = readRetryAfter(answer.headers['retry-after'], run.now());
	if (
		context.onUnknown !== UnknownOutcomeStrategy.retry &&
		!provesNothingDone(status, retryAfter.delayMs)
	) {
		// A 5xx or 408 may come after the target committed: without a key the target
		// honours, a resend could be a second effect.
		item.note({
			kind: 'response',
			status,
			class: 'unknown_outcome',
			message,
			attempt: owned.attempt,
		});
		return await unknownOutcome(
			item,
			owned,
			start,
			`the target answered ${status} (${message}), which does not prove nothing was done`,
			status,
		);
	}
	const decision = decide(item, owned, retryAfter.delayMs);
	item.note({
		kind: 'response',
		status,
		class: 'transient',
		message: retryAfter.invalid
			? `${message} (Retry-After "${retryAfter.invalid}" is not a delay or an HTTP date; backoff used)`
			: message,
		delayMs: decision.kind === 'retry' ? decision.delayMs : undefined,
		attempt: owned.attempt,
	});
	if (decision.kind === 'retry') {
		await run.sleep(decision.delayMs);
		return RESEND;
	}
	if (decision.kind === 'rate_limited') {
		return item.definiteFail(owned, {
			class: FailureClass.rateLimited,
			status,
			message: `${message}; the target asks to retry at ${decision.retryAt.toISOString()}`,
			retryAt: decision.retryAt,
		});
	}
	return item.definiteFail(owned, {
		class: FailureClass.exhausted,
		status,
		message: `${message} (${decision.reason})`,
	});
}

/**
 * No answer. Not sent is safe to retry; a response lost after the request was sent is an
 * unknown outcome, unless the strategy is to retry with the same key (the target dedupes by it).
 */
async function onNoAnswer(
	item: ItemOutcomes,
	owned: Owned,
	start: { validUntil: number },
	result: Extract<SendResult, { kind: 'not_sent' | 'lost' }>,
): Promise<Next> {
	const { run, context } = item;
	if (result.kind === 'lost') owned.lostEarlier = true;
	if (result.kind === 'lost' && context.onUnknown !== UnknownOutcomeStrategy.retry) {
		item.note({
			kind: 'lost',
			class: 'unknown_outcome',
			message: result.message,
			attempt: owned.attempt,
		});
		return await unknownOutcome(
			item,
			owned,
			start,
			`response lost after the request was sent (${result.code})`,
		);
	}
	run.streak.failure();
	const decision = decide(item, owned);
	item.note({
		kind: result.kind,
		class: 'transient',
		message: result.message,
		delayMs: decision.kind === 'retry' ? decision.delayMs : undefined,
		attempt: owned.attempt,
	});
	if (decision.kind === 'retry') {
		await run.sleep(decision.delayMs);
		return RESEND;
	}
	const reason = decision.kind === 'exhausted' ? decision.reason : 'deadline';
	return item.definiteFail(owned, {
		class: FailureClass.exhausted,
		message: `${result.message} (${reason})`,
	});
}

/**
 * The attempt that just ended may have taken effect (`cause` says why). *Reconcile by lookup*
 * waits until its request can no longer land, then looks: found, a success; absent, a resend
 * spaced like any retry. *Park for review* (or no lookup) ends the record unknown.
 */
async function unknownOutcome(
	item: ItemOutcomes,
	owned: Owned,
	start: { validUntil: number },
	cause: string,
	status?: number,
): Promise<Next> {
	const run = item.run;
	owned.lostEarlier = true;
	if (item.context.onUnknown === UnknownOutcomeStrategy.lookup && run.deps.lookup) {
		// The request may still land until its timeout ends; look only after that.
		const grace = inFlightGraceOf(item.context);
		const waitMs = Math.max(0, start.validUntil - leaseMargin(item) - run.now()) + grace;
		if (run.now() + waitMs >= item.deadlineAt) {
			return item.settleFail(owned, 'unknown', {
				class: FailureClass.unknownOutcome,
				status,
				message: `${cause} and no time is left to look it up before the deadline: the effect may exist; check the target before replaying`,
			});
		}
		await run.sleep(waitMs);
		const found = await lookup(item, owned);
		if (found) return found;
		// Absent: a new send, counted and spaced like any retry.
		const decision = decide(item, owned);
		if (decision.kind === 'retry') {
			await run.sleep(decision.delayMs);
			return RESEND;
		}
		return item.definiteFail(owned, {
			class: FailureClass.exhausted,
			status,
			message: `${cause}; the lookup found no effect and no attempt is left (${decision.kind === 'exhausted' ? decision.reason : 'deadline'})`,
		});
	}
	return item.settleFail(owned, 'unknown', {
		class: FailureClass.unknownOutcome,
		status,
		message: `${cause}: the effect may exist; check the target before replaying`,
	});
}

const leaseMargin = (item: ItemOutcomes): number =>
	leaseOf(item.context, item.request) - timeoutOf(item.request);

function decide(item: ItemOutcomes, owned: Owned, retryAfterMs?: number): RetryDecision {
	return decideRetry(
		{ attempt: owned.attempt, startedAtMs: item.started, nowMs: item.run.now(), retryAfterMs },
		item.context.policy,
		item.run.random,
	);
}

/**
 * Starts an attempt under the fence. The lease must still cover the whole attempt when it
 * starts; a run that stalled between the statement and the send asks again. The first attempt
 * of an item the claim started needs no statement while the claim's lease still covers it.
 */
async function startAttempt(
	item: ItemOutcomes,
	owned: Owned,
): Promise<{ validUntil: number } | undefined> {
	const claimed = owned.startedUntil;
	owned.startedUntil = undefined;
	if (claimed !== undefined && item.run.now() + owned.held.timeoutMs <= claimed)
		return { validUntil: claimed };
	for (let tries = 0; tries < 3; tries++) {
		const start = await item.run.leases.startAttempt(owned.held);
		if (!start.owned) return undefined;
		if (item.run.now() + owned.held.timeoutMs <= start.validUntil) return start;
	}
	throw new StoreUnavailableError(
		`The reliability store answered too slowly to keep the lease of key ${item.request.key}`,
		'Nothing more was sent for this key; deliver the item again once the store answers promptly.',
	);
}

/**
 * The execution was cancelled: no attempt starts. The key ends failed (nothing of it took effect)
 * or unknown (an earlier attempt's response was lost), so a redelivery or a replay decides it.
 */
function stopped(item: ItemOutcomes, owned: Owned): WriteOutcome {
	item.note({ kind: 'observed', message: 'the execution was stopped: no further attempt' });
	return item.definiteFail(owned, {
		class: FailureClass.stopped,
		message:
			owned.attempt === 0
				? 'the execution was stopped (Stop, the API, a workflow timeout or a worker shutting down) before the request was sent: nothing was sent'
				: `the execution was stopped (Stop, the API, a workflow timeout or a worker shutting down) after attempt ${owned.attempt}: nothing more was sent`,
	});
}

/** Another execution took the key over: this run sends no more and waits for its result. */
async function superseded(
	item: ItemOutcomes,
	owned: Owned,
	fromRecord: () => Promise<WriteOutcome>,
): Promise<WriteOutcome> {
	item.note({
		kind: 'observed',
		message: 'superseded before an attempt: another execution took the key over',
	});
	if (owned.lostEarlier)
		item.queueSettlement(owned, 'unknown', 'an attempt of a superseded owner lost its response');
	const outcome = await fromRecord();
	return { ...outcome, superseded: true };
}
