import { maskText } from '../masking';
import type { KeyRow } from './keyRow';
import type { Compensation } from './compensation';
import type { Held } from './lease';
import { savedResponse } from './responses';
import { itemRefOf, type RunState, type Settlement } from './runState';
import {
	type AttemptEntry,
	type Failure,
	FailureClass,
	type HttpAnswer,
	type WriteContext,
	type WriteFailure,
	type WriteSuccess,
	type WriteRequest,
} from './types';

/** Where an owned send loop stands. */
export interface Owned {
	held: Held;
	attempt: number;
	/** An attempt's response was lost after it was sent: the effect may exist. */
	lostEarlier: boolean;
	/** The claim started the first attempt: until when (local clock) its lease surely holds. */
	startedUntil?: number;
}

/**
 * What one item has done so far (when it started, its attempt history, the record it holds,
 * the requests it sent) and the outcomes made from it: a success or failure for the node's
 * outputs, and for a record this run owns the settlement the next wave writes.
 */
export class ItemOutcomes {
	readonly started: number;
	private readonly history: AttemptEntry[] = [];
	/** The record this item holds, once it claimed or took it over. */
	owned: Owned | undefined;
	/** Requests this item sent. */
	sent = 0;

	constructor(
		readonly run: RunState,
		readonly request: WriteRequest,
	) {
		this.started = run.now();
	}

	get context(): WriteContext {
		return this.run.context;
	}

	get deadlineAt(): number {
		return this.started + this.context.policy.deadlineMs;
	}

	succeed(owned: Owned, answer: HttpAnswer): WriteSuccess {
		const outcome: WriteSuccess = {
			index: this.request.index,
			key: this.request.key,
			ok: true,
			replayed: false,
			attempts: owned.attempt,
			durationMs: this.run.now() - this.started,
			answer,
		};
		this.run.settle(
			{
				...this.settlement(owned, 'succeeded'),
				...savedResponse(answer, this.context.maxSavedBodyChars, this.context.maskFields),
			},
			outcome,
		);
		return outcome;
	}

	/**
	 * A failure of a record this run owns. A definite failure after an attempt whose response was
	 * lost is not definite: the effect may exist, so the record ends unknown.
	 */
	definiteFail(owned: Owned, failure: Failure): WriteFailure {
		if (!owned.lostEarlier) return this.settleFail(owned, 'failed', failure);
		return this.settleFail(owned, 'unknown', {
			...failure,
			class: FailureClass.unknownOutcome,
			message: `${failure.message}; an earlier attempt's response was lost after it was sent, so the effect may exist: check the target before replaying`,
		});
	}

	settleFail(owned: Owned, settle: 'failed' | 'unknown', failure: Failure): WriteFailure {
		const outcome = this.fail(owned.attempt, failure);
		this.run.settle(
			{
				...this.settlement(owned, settle),
				last_error: failure.message,
				response_status: failure.status,
			},
			outcome,
		);
		return outcome;
	}

	queueSettlement(owned: Owned, settle: 'unknown', message: string): void {
		this.run.settle(
			{ ...this.settlement(owned, settle), last_error: message },
			this.fail(owned.attempt, {
				class: FailureClass.superseded,
				message,
			}),
		);
	}

	private settlement(owned: Owned, outcome: Settlement['outcome']): Settlement {
		return {
			scope: this.request.scope,
			key: this.request.key,
			generation: owned.held.generation,
			fingerprint: this.request.fingerprint,
			outcome,
			history: this.history,
			item_ref: itemRefOf(this.request, this.context),
			compensation: maskedCompensation(this.request.compensation, this.context.maskFields),
		};
	}

	/** Every failure's message is masked: it reaches the Failed output, the store and alerts. */
	fail(attempts: number, failure: Failure): WriteFailure {
		failure.message = maskText(failure.message, this.context.maskFields);
		return {
			index: this.request.index,
			key: this.request.key,
			ok: false,
			replayed: false,
			attempts,
			durationMs: this.run.now() - this.started,
			failure,
			history: [...this.history],
		};
	}

	note(entry: Omit<AttemptEntry, 'at' | 'attempt' | 'execution'> & { attempt?: number }): void {
		this.history.push({
			at: new Date().toISOString(),
			attempt: entry.attempt ?? 0,
			execution: this.context.executionId,
			...entry,
			message:
				entry.message === undefined
					? undefined
					: maskText(entry.message, this.context.maskFields).slice(0, 300),
		});
	}
}

/**
 * A refused precondition, with both versions: the one the write expected and the one the target
 * holds (its ETag, Last-Modified, or a version in the answer), so a person sees what changed.
 */
export function conflictMessage(
	request: WriteRequest,
	answer: HttpAnswer,
	message: string,
): string {
	const header = (name: string) => {
		const value = answer.headers[name];
		return Array.isArray(value) ? value[0] : value;
	};
	const body = answer.body as Record<string, unknown> | null;
	const holds =
		header('etag') ??
		header('last-modified') ??
		(body && typeof body === 'object' && body.version !== undefined
			? String(body.version)
			: undefined);
	const expected = request.precondition
		? `expected ${request.precondition.header}: ${request.precondition.value}`
		: 'expected the version it was built on';
	return `the target refused the write (${answer.status} ${message}): its record changed since; ${expected}, the target holds ${holds ?? 'another version'}. Not retried: a person decides which value stands`;
}

/** A request under a key that already succeeded with another request: never sent. */
export function conflictWithSuccess(key: string): string {
	return `key ${key} already succeeded with a different request; a key must always carry the same request`;
}

/**
 * A request under a key whose effect Compensate reversed: never sent, never answered from the
 * saved response (its resource is gone). Doing the operation again is a new operation.
 */
export function compensatedKey(
	key: string,
	row: Pick<KeyRow, 'compensated_at' | 'compensated_by' | 'compensated_for'>,
): string {
	const at =
		row.compensated_at instanceof Date
			? row.compensated_at.toISOString()
			: (row.compensated_at ?? 'an unknown time');
	const letter = row.compensated_for ? ` (dead letter ${row.compensated_for})` : '';
	return `key ${key} was compensated at ${at}, by ${row.compensated_by ?? 'an unknown actor'}${letter}: its effect was reversed, so its saved response is not returned and nothing is sent. To do the operation again, give it a new key (a new record version or action)`;
}

/** An item that ends before anything was sent for it: no attempt, no time, its failure. */
export function unsentFailure(request: WriteRequest, failure: Failure): WriteFailure {
	return {
		index: request.index,
		key: request.key,
		ok: false,
		replayed: false,
		attempts: 0,
		durationMs: 0,
		failure,
	};
}

/**
 * A step's compensation as its key record keeps it: masked like every text the store keeps, the
 * repair plan (made from the item) and the request template alike. A template that loses a
 * secret to the masking is refused when Compensate would send it.
 */
function maskedCompensation(
	compensation: Compensation | undefined,
	maskFields: string[] | undefined,
): Compensation | null {
	if (!compensation) return null;
	if (compensation.kind === 'manual')
		return { kind: 'manual', plan: maskText(compensation.plan, maskFields) };
	return {
		kind: 'request',
		method: compensation.method,
		url: maskText(compensation.url, maskFields),
		...(compensation.body === undefined ? {} : { body: maskText(compensation.body, maskFields) }),
	};
}
