import { StoreUnavailableError } from '../errors';
import { maskText } from '../masking';
import type { Store } from '../store';
import type { BreakerStreak } from './breaker';
import { heldId, type Held, type RunLeases } from './lease';
import { classifyStatus, decideRetry, readRetryAfter, type RetryDecision } from './policy';
import { fromSaved, savedResponse, type SavedResponse, targetMessage } from './responses';
import type { Compensation } from './compensation';
import { abandonKeySql, claimKeysSql, readKeySql, takeOverSql } from './sql';
import {
	type AttemptEntry,
	type Failure,
	FailureClass,
	type HttpAnswer,
	KeyStatus,
	UnknownOutcomeStrategy,
	type WriteContext,
	type WriteDeps,
	type WriteOutcome,
	type WriteRequest,
} from './types';

/**
 * One item of a run, from the record the claim found to its outcome: replay a saved response,
 * wait for another owner, reconcile an unknown outcome, refuse a conflict, or send with
 * retries. Every path is bounded by the same attempt cap and deadline, and every send is
 * preceded by a fenced attempt start, so an owner that lost the key never sends.
 */

/** A record as the claim (or a read) returns it. */
export interface KeyRow {
	claimed?: boolean;
	status: KeyStatus | null;
	generation: number | string | null;
	fingerprint: string | null;
	lease_expired: boolean | null;
	response_status: number | null;
	response_headers: Record<string, string> | null;
	response_body: string | null;
	response_truncated: boolean | null;
	attempts: number | null;
	execution_id: string | null;
	/** Milliseconds until the last attempt's window ends (negative once it has). */
	in_flight_ms: number | string | null;
}

/** An outcome the owner records for its key, in the next wave. */
export interface Settlement extends Partial<SavedResponse> {
	scope: string;
	key: string;
	generation: number;
	fingerprint: string;
	outcome: 'succeeded' | 'failed' | 'unknown';
	last_error?: string;
	history: AttemptEntry[];
	item_ref: string;
	compensation: Compensation | null;
}

/** What the items of one run share. */
export interface RunState {
	store: Store;
	context: WriteContext;
	deps: WriteDeps;
	leases: RunLeases;
	streak: BreakerStreak;
	progress: { sent: number };
	settle(settlement: Settlement, outcome: WriteOutcome): void;
	now(): number;
	sleep(ms: number): Promise<void>;
	random(): number;
}

const DEFAULT_LEASE_MARGIN_MS = 20_000;
const DEFAULT_IN_FLIGHT_GRACE_MS = 2_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export const timeoutOf = (request: WriteRequest): number => request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
export const leaseOf = (context: WriteContext, request: WriteRequest): number =>
	timeoutOf(request) + (context.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);

const emptyRow: KeyRow = {
	status: null,
	generation: null,
	fingerprint: null,
	lease_expired: null,
	response_status: null,
	response_headers: null,
	response_body: null,
	response_truncated: null,
	attempts: null,
	execution_id: null,
	in_flight_ms: null,
};

/** Where an owned send loop stands. */
interface Owned {
	held: Held;
	attempt: number;
	/** An attempt's response was lost after it was sent: the effect may exist. */
	lostEarlier: boolean;
}

export class ItemWrite {
	private readonly started: number;
	private readonly history: AttemptEntry[] = [];
	/** The record this item holds, once it claimed or took it over. */
	private owned: Owned | undefined;
	/** Requests this item sent. */
	private sent = 0;

	constructor(
		private readonly run: RunState,
		private readonly request: WriteRequest,
	) {
		this.started = run.now();
	}

	private get context(): WriteContext {
		return this.run.context;
	}

	private get deadlineAt(): number {
		return this.started + this.context.policy.deadlineMs;
	}

	/**
	 * The item to its outcome. Anything unexpected (a bug, an answer nothing foresaw) ends this
	 * item alone: its record, if it holds one, is settled unknown when a request went out and
	 * failed when none did, and the item is parked with what is known.
	 */
	async write(first: KeyRow): Promise<WriteOutcome> {
		try {
			return await this.fromRow(first);
		} catch (error) {
			if (error instanceof StoreUnavailableError) throw error;
			const cause = error instanceof Error ? error.message : String(error);
			const failure: Failure =
				this.sent > 0
					? {
							class: FailureClass.unknownOutcome,
							message: `the write failed after a request was sent, so the effect may exist: ${cause}`,
						}
					: {
							class: FailureClass.permanent,
							message: `the write failed before anything was sent: ${cause}`,
						};
			if (this.owned)
				return this.settleFail(this.owned, this.sent > 0 ? 'unknown' : 'failed', failure);
			return this.fail(this.sent, failure);
		}
	}

	/** Decides from the record the claim found; loops only while the record changes under it. */
	private async fromRow(first: KeyRow): Promise<WriteOutcome> {
		let row = first;
		for (;;) {
			if (row.claimed) return await this.sendLoop(this.holdFrom(row));
			if (row.status === KeyStatus.succeeded) return this.replayOrConflict(row);
			if (
				row.status === KeyStatus.unknown ||
				(row.status === KeyStatus.inProgress && row.lease_expired)
			) {
				return await this.reconcileUnknown(row);
			}
			if (row.status === KeyStatus.inProgress) {
				if (row.fingerprint !== this.request.fingerprint) {
					return this.fail(0, {
						class: FailureClass.conflict,
						message: `key ${this.request.key} is being written by another execution with a different request`,
					});
				}
				const next = await this.waitForOwner(row);
				if (!next) {
					return this.fail(0, {
						class: FailureClass.unknownOutcome,
						message: `key ${this.request.key} was still in progress elsewhere (execution ${row.execution_id ?? '?'}) when the deadline of ${Math.round(this.context.policy.deadlineMs / 1000)} s was reached`,
					});
				}
				row = next;
				continue;
			}
			// Failed meanwhile (claimable again) or gone: claim it for this run.
			if (this.run.now() >= this.deadlineAt) {
				return this.fail(0, {
					class: FailureClass.exhausted,
					message: `key ${this.request.key} could not be claimed before the deadline`,
				});
			}
			row = await this.claimAgain();
		}
	}

	private holdFrom(row: KeyRow): Owned {
		const held: Held = {
			scope: this.request.scope,
			key: this.request.key,
			generation: Number(row.generation),
			leaseMs: leaseOf(this.context, this.request),
			timeoutMs: timeoutOf(this.request),
		};
		this.run.leases.hold(held);
		this.owned = { held, attempt: 0, lostEarlier: false };
		return this.owned;
	}

	private replayOrConflict(row: KeyRow): WriteOutcome {
		if (row.fingerprint !== this.request.fingerprint) {
			return this.fail(0, {
				class: FailureClass.conflict,
				message: `key ${this.request.key} already succeeded with a different request; a key must always carry the same request`,
			});
		}
		return {
			index: this.request.index,
			key: this.request.key,
			ok: true,
			replayed: true,
			attempts: row.attempts ?? 0,
			durationMs: this.run.now() - this.started,
			answer: fromSaved(row),
		};
	}

	/** Polls a record another owner holds until it changes; undefined at the deadline. */
	private async waitForOwner(row: KeyRow): Promise<KeyRow | undefined> {
		let current = row;
		while (current.status === KeyStatus.inProgress && !current.lease_expired) {
			if (this.run.now() >= this.deadlineAt) return undefined;
			await this.run.sleep(Math.min(1_000, 100 + Math.floor(this.run.random() * 200)));
			current = await this.read();
		}
		return current;
	}

	private async read(): Promise<KeyRow> {
		const [fresh] = await this.run.store.query<KeyRow>(readKeySql(this.run.store), [
			this.request.scope,
			this.request.key,
		]);
		return fresh ?? emptyRow;
	}

	private async claimAgain(): Promise<KeyRow> {
		const [again] = await this.run.store.query<KeyRow>(claimKeysSql(this.run.store), [
			JSON.stringify([
				{
					ord: 0,
					scope: this.request.scope,
					key: this.request.key,
					fingerprint: this.request.fingerprint,
					lease_ms: leaseOf(this.context, this.request),
					timeout_ms: timeoutOf(this.request),
				},
			]),
			this.context.workflowId ?? null,
			this.context.executionId,
			this.context.node,
			this.context.retentionDays,
		]);
		return again;
	}

	/**
	 * An unknown outcome (a lost response, a dead owner): the effect may exist. Park, or take the
	 * record over (fenced: of two takers one wins), wait until the last attempt can no longer
	 * land, then look the effect up or resend with the same key.
	 */
	private async reconcileUnknown(row: KeyRow): Promise<WriteOutcome> {
		if (row.status === KeyStatus.inProgress) {
			// Its owner is gone: first record what is known (nothing sent: failed; else unknown).
			await this.run.store.query(abandonKeySql(this.run.store), [
				this.request.scope,
				this.request.key,
				row.generation,
			]);
			return await this.fromRow(await this.read());
		}
		const strategy = this.context.onUnknown;
		if (
			row.fingerprint !== this.request.fingerprint &&
			strategy !== UnknownOutcomeStrategy.lookup
		) {
			return this.fail(0, {
				class: FailureClass.conflict,
				message: `an earlier request with key ${this.request.key} carried a different request and its outcome is unknown: check the target, then resolve or replay`,
			});
		}
		if (strategy === UnknownOutcomeStrategy.park) {
			return this.fail(0, {
				class: FailureClass.unknownOutcome,
				message: `an earlier attempt on key ${this.request.key} ended without an answer: the effect may exist; check the target, then replay`,
			});
		}
		const [taken] = await this.run.store.query<{ generation: string }>(
			takeOverSql(this.run.store),
			[
				this.request.scope,
				this.request.key,
				row.generation,
				this.context.executionId,
				leaseOf(this.context, this.request),
				this.context.workflowId ?? null,
				this.context.node,
			],
		);
		if (!taken) return await this.fromRow(await this.read());
		const owned = this.holdFrom({ ...row, generation: Number(taken.generation) });
		owned.lostEarlier = true;

		if (strategy === UnknownOutcomeStrategy.lookup && this.run.deps.lookup) {
			// A lookup is only exact once the last attempt can no longer land: wait that out. A
			// resend with the same key need not wait: the target answers it from the key.
			const waitMs =
				Math.max(0, Number(row.in_flight_ms ?? 0)) +
				(this.context.inFlightGraceMs ?? DEFAULT_IN_FLIGHT_GRACE_MS);
			if (this.run.now() + waitMs >= this.deadlineAt) {
				return this.settleFail(owned, 'unknown', {
					class: FailureClass.unknownOutcome,
					message: `an earlier attempt on key ${this.request.key} may still land within ${Math.ceil(waitMs / 1000)} s, after the deadline: check the target, then replay`,
				});
			}
			await this.run.sleep(waitMs);
			const found = await this.lookup(owned);
			if (found) return found;
		}
		return await this.sendLoop(owned);
	}

	/**
	 * Reconcile by lookup: exists -> success with the found resource; absent -> undefined (the
	 * caller sends); conflict or no answer within the budget -> unknown, parked. A failed lookup
	 * is retried with backoff, bounded like the sends.
	 */
	private async lookup(owned: Owned): Promise<WriteOutcome | undefined> {
		for (let tries = 1; ; tries++) {
			let message: string;
			try {
				const found = await this.run.deps.lookup!(this.request);
				this.note({ kind: 'lookup', class: found.kind });
				// The integration answered: for the breaker, as good as a success.
				this.run.streak.success();
				if (found.kind === 'exists')
					return { ...this.succeed(owned, found.answer), replayed: true };
				if (found.kind === 'absent') {
					owned.lostEarlier = false;
					return undefined;
				}
				return this.settleFail(owned, 'unknown', {
					class: FailureClass.unknownOutcome,
					message: `reconcile found a conflicting record: ${found.message}`,
				});
			} catch (error) {
				message = error instanceof Error ? error.message : String(error);
				this.note({ kind: 'lookup', class: 'error', message });
			}
			const decision = decideRetry(
				{ attempt: tries, startedAtMs: this.started, nowMs: this.run.now() },
				this.context.policy,
				this.run.random,
			);
			if (decision.kind !== 'retry') {
				return this.settleFail(owned, 'unknown', {
					class: FailureClass.unknownOutcome,
					message: `the lookup that decides whether the effect exists failed (${message}), so the effect may exist; check the target, then replay`,
				});
			}
			await this.run.sleep(decision.delayMs);
		}
	}

	/** The send loop of a record this run owns: retries transient failures inside the deadline. */
	private async sendLoop(owned: Owned): Promise<WriteOutcome> {
		for (;;) {
			const start = await this.startAttempt(owned);
			if (!start) return await this.superseded(owned);
			owned.attempt++;
			this.sent++;
			this.run.progress.sent++;
			const result = await this.run.deps.send(this.request, owned.attempt);
			const policy = this.context.policy;

			if (result.kind === 'response') {
				const status = result.answer.status;
				const answerClass = classifyStatus(status, policy);
				if (answerClass === 'success') {
					this.note({ kind: 'response', status, class: 'success', attempt: owned.attempt });
					this.run.streak.success();
					return this.succeed(owned, result.answer);
				}
				const message = targetMessage(result.answer, this.context.maskFields);
				if (answerClass === 'conflict') {
					this.note({
						kind: 'response',
						status,
						class: 'conflict',
						message,
						attempt: owned.attempt,
					});
					return this.definiteFail(owned, {
						class: FailureClass.conflict,
						status,
						message: conflictMessage(this.request, result.answer, message),
					});
				}
				if (answerClass === 'permanent') {
					this.note({
						kind: 'response',
						status,
						class: 'permanent',
						message,
						attempt: owned.attempt,
					});
					return this.definiteFail(owned, { class: FailureClass.permanent, status, message });
				}
				this.run.streak.failure();
				const retryAfter = readRetryAfter(result.answer.headers['retry-after'], this.run.now());
				const decision = this.decide(owned, retryAfter.delayMs);
				this.note({
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
					await this.run.sleep(decision.delayMs);
					continue;
				}
				if (decision.kind === 'rate_limited') {
					return this.definiteFail(owned, {
						class: FailureClass.rateLimited,
						status,
						message: `${message}; the target asks to retry at ${decision.retryAt.toISOString()}`,
						retryAt: decision.retryAt,
					});
				}
				return this.definiteFail(owned, {
					class: FailureClass.exhausted,
					status,
					message: `${message} (${decision.reason})`,
				});
			}

			if (result.kind === 'lost') owned.lostEarlier = true;
			const strategy = this.context.onUnknown;
			if (result.kind === 'lost' && strategy !== UnknownOutcomeStrategy.retry) {
				this.note({
					kind: 'lost',
					class: 'unknown_outcome',
					message: result.message,
					attempt: owned.attempt,
				});
				if (strategy === UnknownOutcomeStrategy.lookup && this.run.deps.lookup) {
					// The request may still land until its timeout ends; look only after that.
					const grace = this.context.inFlightGraceMs ?? DEFAULT_IN_FLIGHT_GRACE_MS;
					const waitMs =
						Math.max(0, start.validUntil - this.leaseMargin() - this.run.now()) + grace;
					if (this.run.now() + waitMs >= this.deadlineAt) {
						return this.settleFail(owned, 'unknown', {
							class: FailureClass.unknownOutcome,
							message: `response lost after the request was sent (${result.code}) and no time is left to look it up before the deadline: the effect may exist; check the target before replaying`,
						});
					}
					await this.run.sleep(waitMs);
					const found = await this.lookup(owned);
					if (found) return found;
					// Absent: a new send, counted and spaced like any retry.
					const decision = this.decide(owned);
					if (decision.kind === 'retry') {
						await this.run.sleep(decision.delayMs);
						continue;
					}
					return this.definiteFail(owned, {
						class: FailureClass.exhausted,
						message: `response lost after the request was sent (${result.code}); the lookup found no effect and no attempt is left (${decision.kind === 'exhausted' ? decision.reason : 'deadline'})`,
					});
				}
				return this.settleFail(owned, 'unknown', {
					class: FailureClass.unknownOutcome,
					message: `response lost after the request was sent (${result.code}): the effect may exist; check the target before replaying`,
				});
			}
			// Not sent (safe), or lost with "retry with the same key" (the target dedupes by key).
			this.run.streak.failure();
			const decision = this.decide(owned);
			this.note({
				kind: result.kind,
				class: 'transient',
				message: result.message,
				delayMs: decision.kind === 'retry' ? decision.delayMs : undefined,
				attempt: owned.attempt,
			});
			if (decision.kind === 'retry') {
				await this.run.sleep(decision.delayMs);
				continue;
			}
			const reason = decision.kind === 'exhausted' ? decision.reason : 'deadline';
			return this.definiteFail(owned, {
				class: FailureClass.exhausted,
				message: `${result.message} (${reason})`,
			});
		}
	}

	private leaseMargin(): number {
		return leaseOf(this.context, this.request) - timeoutOf(this.request);
	}

	private decide(owned: Owned, retryAfterMs?: number): RetryDecision {
		return decideRetry(
			{ attempt: owned.attempt, startedAtMs: this.started, nowMs: this.run.now(), retryAfterMs },
			this.context.policy,
			this.run.random,
		);
	}

	/**
	 * Starts an attempt under the fence. The lease must still cover the whole attempt when it
	 * starts; a run that stalled between the statement and the send asks again.
	 */
	private async startAttempt(owned: Owned): Promise<{ validUntil: number } | undefined> {
		for (let tries = 0; tries < 3; tries++) {
			const start = await this.run.leases.startAttempt(owned.held);
			if (!start.owned) return undefined;
			if (this.run.now() + owned.held.timeoutMs <= start.validUntil) return start;
		}
		throw new StoreUnavailableError(
			`The reliability store answered too slowly to keep the lease of key ${this.request.key}`,
			'Nothing more was sent for this key; deliver the item again once the store answers promptly.',
		);
	}

	/** Another execution took the key over: this run sends no more and waits for its result. */
	private async superseded(owned: Owned): Promise<WriteOutcome> {
		this.note({
			kind: 'observed',
			message: 'superseded before an attempt: another execution took the key over',
		});
		if (owned.lostEarlier)
			this.queueSettlement(owned, 'unknown', 'an attempt of a superseded owner lost its response');
		const outcome = await this.fromRow(await this.read());
		return { ...outcome, superseded: true };
	}

	private succeed(owned: Owned, answer: HttpAnswer): WriteOutcome {
		const outcome: WriteOutcome = {
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
	private definiteFail(owned: Owned, failure: Failure): WriteOutcome {
		if (!owned.lostEarlier) return this.settleFail(owned, 'failed', failure);
		return this.settleFail(owned, 'unknown', {
			...failure,
			class: FailureClass.unknownOutcome,
			message: `${failure.message}; an earlier attempt's response was lost after it was sent, so the effect may exist: check the target before replaying`,
		});
	}

	private settleFail(owned: Owned, settle: 'failed' | 'unknown', failure: Failure): WriteOutcome {
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

	private queueSettlement(owned: Owned, settle: 'unknown', message: string): void {
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
			// A repair plan is text made from the item, masked like every text the store keeps; a
			// compensating request is the template the workflow's author wrote, kept as written
			// because Compensate sends it.
			compensation:
				this.request.compensation?.kind === 'manual'
					? {
							kind: 'manual',
							plan: maskText(this.request.compensation.plan, this.context.maskFields),
						}
					: (this.request.compensation ?? null),
		};
	}

	/** Every failure's message is masked: it reaches the Failed output, the store and alerts. */
	private fail(attempts: number, failure: Failure): WriteOutcome {
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

	private note(
		entry: Omit<AttemptEntry, 'at' | 'attempt' | 'execution'> & { attempt?: number },
	): void {
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

export const keyIdOf = (request: WriteRequest): string => heldId(request.scope, request.key);

/** The item a write is a step of: as given, else this execution's item at this index. */
export const itemRefOf = (request: WriteRequest, context: WriteContext): string =>
	request.itemRef ?? `${context.executionId}:${request.index}`;

/**
 * A refused precondition, with both versions: the one the write expected and the one the target
 * holds (its ETag, Last-Modified, or a version in the answer), so a person sees what changed.
 */
function conflictMessage(request: WriteRequest, answer: HttpAnswer, message: string): string {
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
