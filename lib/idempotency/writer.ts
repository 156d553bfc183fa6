import { markAlertDue } from '../deadletter/alertDue';
import { StoreUnavailableError } from '../errors';
import { maskText } from '../masking';
import { checkLength, inRange, lengthProblem, LIMITS, TEXT_LIMITS } from '../limits';
import { abortableSleep } from '../sleep';
import type { Store } from '../store';
import { ItemWrite } from './attempts';
import { BreakerStreak, recordBreaker } from './breaker';
import { claimKeys, type GateState } from './claim';
import { carriesEvent, drillNotice, withForcedTimeout } from '../drill/fault';
import { gate } from './gate';
import { unsentFailure } from './outcomes';
import type { KeyRow } from './keyRow';
import { checkedKey, MAX_KEY_LENGTH } from './keys';
import { RunLeases } from './lease';
import { keyIdOf, type RunState, type Settlement } from './runState';
import { adoptScope } from './scopes';
import {
	FailureClass,
	type WriteContext,
	type WriteDeps,
	type WriteFailure,
	type WriteOutcome,
	type WriteRequest,
} from './types';
import { Waves } from './waves';

/**
 * One run of the Idempotent HTTP Write, free of n8n: claim every key in one statement, then
 * per item (with bounded concurrency) replay, wait, reconcile, refuse or send with retries.
 * Outcomes are settled, parked and their open dead letters closed in waves: a statement of
 * each per wave, a wave every third of the shortest lease and one at the end, and each wave
 * also renews the leases of every record the run still holds. The HTTP call itself is
 * injected, so n8n's helpers (and any credential type) make it.
 *
 * One item's bad input or bad answer ends that item alone; the store failing ends the run,
 * after the items already sending have finished, with how many requests had gone out.
 */
export async function runWrites(
	store: Store,
	context: WriteContext,
	requests: WriteRequest[],
	deps: WriteDeps,
): Promise<WriteOutcome[]> {
	inRange(context.retentionDays, LIMITS.retentionDays);
	inRange(context.concurrency, LIMITS.concurrency);
	checkWriteContext(context);
	const release = store.hold();
	const run = new Run(store, context, deps);
	try {
		return await run.writeAll(requests);
	} catch (error) {
		throw run.explain(error);
	} finally {
		run.stop();
		release();
	}
}

/**
 * The run's own texts go into indexed columns of every record and dead letter it writes: one too
 * long would fail the statement for every item, after requests were sent. Refused before
 * anything is claimed.
 */
function checkWriteContext(context: WriteContext): void {
	checkLength(context.workflowId, TEXT_LIMITS.workflowId);
	checkLength(context.executionId, TEXT_LIMITS.executionId);
	checkLength(context.node, { ...TEXT_LIMITS.step, label: 'The node name' });
	checkLength(context.integration, TEXT_LIMITS.integration);
	checkLength(context.owner, TEXT_LIMITS.owner);
}

/** A run's items and what they share: the leases, the breaker's streak, the waves. */
class Run implements RunState {
	readonly leases: RunLeases;
	readonly streak = new BreakerStreak();
	readonly progress = { sent: 0 };
	readonly now: () => number;
	readonly sleep: (ms: number) => Promise<void>;
	readonly random: () => number;
	private readonly waves: Waves;
	private readonly startedAt: number;

	/** The run's sender and clock; a run in a fire drill's armed integration wraps the sender. */
	deps: WriteDeps;

	constructor(
		readonly store: Store,
		readonly context: WriteContext,
		deps: WriteDeps,
	) {
		this.deps = deps;
		this.now = deps.now ?? Date.now;
		this.startedAt = this.now();
		this.sleep = deps.sleep ?? ((ms) => abortableSleep(ms, deps.signal));
		this.random = deps.random ?? Math.random;
		this.leases = new RunLeases(store, this.now);
		this.waves = new Waves(store, context, this.leases);
	}

	settle(settlement: Settlement, outcome: WriteOutcome): void {
		this.waves.settle(settlement, outcome);
	}

	stop(): void {
		this.waves.stop();
	}

	async writeAll(all: WriteRequest[]): Promise<WriteOutcome[]> {
		// Items that could not become requests end alone: parked, nothing claimed or sent.
		for (const request of all) {
			if (request.invalid !== undefined) continue;
			const checked = checkedKey(request.key, false);
			const tooLong =
				lengthProblem(request.scope, TEXT_LIMITS.scope) ??
				lengthProblem(request.itemRef, TEXT_LIMITS.itemReference);
			if ('problem' in checked) request.invalid = `Item ${request.index}: ${checked.problem}`;
			else if (checked.key !== request.key)
				request.invalid = `Item ${request.index}: the idempotency key is longer than ${MAX_KEY_LENGTH} characters and was not hashed`;
			else if (tooLong !== undefined)
				request.invalid = `Item ${request.index}: ${tooLong}; nothing was claimed or sent`;
		}
		const invalid = new Map(
			all
				.filter((r) => r.invalid !== undefined)
				.map((request): [number, WriteOutcome] => {
					const outcome = unsentFailure(request, {
						class: FailureClass.invalid,
						message: maskText(request.invalid!, this.context.maskFields),
					});
					this.waves.park(outcome, request);
					return [request.index, outcome];
				}),
		);
		const requests = all.filter((r) => r.invalid === undefined);
		const valid = await this.writeValid(requests);
		const byIndex = new Map(valid.map((o) => [o.index, o]));
		await this.waves.flush();
		if (this.waves.fatal) throw this.waves.fatal;
		// A success proven here on a record another owner took over is settled once that owner is
		// done. Every item is decided by now: a store error here leaves the record to that owner
		// and its execution's error workflow, as the deadline does, and fails no item.
		const until = this.startedAt + this.context.policy.deadlineMs;
		await this.waves
			.settleProven(() => this.now() < until && !this.deps.signal?.aborted, this.sleep)
			.catch(() => undefined);
		// Stopped (checked last, so a stop during the wait above counts): n8n runs none of this
		// node's outputs. A failed item routed to Failed would be in no output and no letter: it is
		// parked (as stopped, or with the failure it met before the stop) unless the caller retries
		// it itself. And no Alert after the Failed output runs: the letters this run parked are
		// alerted by Recover instead.
		if (this.deps.signal?.aborted) {
			const failed = all
				.map((request) => ({
					request,
					outcome: invalid.get(request.index) ?? byIndex.get(request.index),
				}))
				.filter(
					(f): f is { request: WriteRequest; outcome: WriteFailure } =>
						!!f.outcome && !f.outcome.ok,
				);
			if (!this.context.park && this.context.parkIfStopped) {
				for (const { request, outcome } of failed) this.waves.parkUnrouted(outcome, request);
				await this.waves.flush();
				if (this.waves.fatal) throw this.waves.fatal;
			}
			const parked = failed
				.map(({ outcome }) => outcome.failure.deadLetterId)
				.filter((id): id is string => id !== undefined);
			if (parked.length > 0)
				await markAlertDue(this.store, { executionId: this.context.executionId, ids: parked });
		}
		if (this.context.integration && this.context.breaker) {
			await recordBreaker(
				this.store,
				this.context.integration,
				this.streak,
				this.context.breaker,
				this.waves.settledSuccess,
			);
		}
		return all.map((r) => invalid.get(r.index) ?? byIndex.get(r.index)!);
	}

	private async writeValid(requests: WriteRequest[]): Promise<WriteOutcome[]> {
		if (requests.length === 0) return [];

		// Duplicate keys inside the run: the first occurrence does the work, the others share it.
		const firstByKey = new Map<string, WriteRequest>();
		for (const r of requests) if (!firstByKey.has(keyIdOf(r))) firstByKey.set(keyIdOf(r), r);
		const leaders = [...firstByKey.values()];
		if (this.context.adoptScope) await adoptScope(this.store, this.context.adoptScope);
		// The claim carries the gate: paused or breaker open, it claims nothing and the run is held.
		// The items the lanes take first are sent at once: the claim starts their first attempt.
		const { rows: claims, gate: seen } = await claimKeys(
			this.store,
			this.context,
			this.leases,
			leaders,
			this.laneCount(leaders.length),
		);
		this.drill(seen, leaders);
		// Renewing from now on: the gate's release of breaker-held letters may wait on their locks.
		this.waves.schedule();
		const held = await gate(this.store, this.context, this.waves, requests, seen);
		if (held) return held;

		const leaderOutcomes = await this.lanes(leaders, (request, ord) =>
			this.writeItem(request, claims.get(ord)!),
		);
		const byKey = new Map(
			leaders.map((r, i) => [keyIdOf(r), { request: r, outcome: leaderOutcomes[i] }]),
		);
		return requests.map((request) => {
			const lead = byKey.get(keyIdOf(request))!;
			if (lead.request === request) return lead.outcome;
			const outcome = this.shared(request, lead.request, lead.outcome);
			if (!outcome.ok) this.waves.park(outcome, request);
			return outcome;
		});
	}

	/**
	 * An integration in a fire drill: said in the output. A forced timeout armed for an event this
	 * run writes (a key or business ID carrying its value) wraps the sender; other runs send as
	 * always.
	 */
	private drill(seen: GateState, requests: WriteRequest[]): void {
		const integration = this.context.integration;
		if (!integration || !seen.drill_until) return;
		const event = seen.drill_armed_for;
		const hit = !!event && requests.some((r) => carriesEvent(r, event));
		this.deps.notice?.(drillNotice(integration, seen.drill_until, hit));
		if (!hit) return;
		this.deps = {
			...this.deps,
			send: withForcedTimeout(this.store, this.deps.send, {
				integration,
				event,
				executionId: this.context.executionId,
			}),
		};
	}

	/**
	 * Runs the items with at most `concurrency` at once. After a store failure no lane starts
	 * another item, and the run waits for the items already sending before it ends.
	 */
	private async lanes<R>(
		items: WriteRequest[],
		work: (item: WriteRequest, ord: number) => Promise<R>,
	): Promise<R[]> {
		const results = new Array<R>(items.length);
		let next = 0;
		const limit = this.laneCount(items.length);
		await Promise.all(
			Array.from({ length: limit }, async () => {
				while (next < items.length && !this.waves.fatal) {
					const at = next++;
					try {
						results[at] = await work(items[at], at);
					} catch (error) {
						this.waves.fatal ??= error;
					}
				}
			}),
		);
		if (this.waves.fatal) throw this.waves.fatal;
		return results;
	}

	/** How many items run at once: each lane takes the next item in order. */
	private laneCount(items: number): number {
		return Math.max(1, Math.min(this.context.concurrency, items));
	}

	/** One item to its outcome; anything unexpected ends this item, never the run (but a store failure does). */
	private async writeItem(request: WriteRequest, row: KeyRow): Promise<WriteOutcome> {
		const outcome = await new ItemWrite(this, request).write(row);
		if (outcome.ok) this.waves.succeeded(request);
		else this.waves.park(outcome, request);
		// The wave parks before it closes: an owner's success that landed after this item stopped
		// waiting closes the letter it leaves, whichever of the two statements came first.
		if (outcome.waitedOn) this.waves.succeeded(request);
		return outcome;
	}

	/** The outcome of a later copy of a key in the same run: the first copy's. */
	private shared(request: WriteRequest, lead: WriteRequest, outcome: WriteOutcome): WriteOutcome {
		if (lead.fingerprint !== request.fingerprint) {
			return unsentFailure(request, {
				class: FailureClass.conflict,
				message: `key ${request.key} appears twice in this run with different requests`,
			});
		}
		if (!outcome.ok) {
			return {
				...outcome,
				index: request.index,
				failure: { ...outcome.failure, deadLetterId: undefined },
			};
		}
		return { ...outcome, index: request.index, replayed: true, durationMs: 0 };
	}

	/**
	 * The store failing mid-run: say whether requests had gone out, since that decides what a
	 * person may assume. Their keys make a redelivery safe either way.
	 */
	explain(error: unknown): unknown {
		if (!(error instanceof StoreUnavailableError)) return error;
		const sent = this.progress.sent;
		const hint =
			sent === 0
				? `${error.hint ?? ''} Nothing was sent.`
				: `${error.hint ?? ''} ${sent} request${sent === 1 ? ' had' : 's had'} been sent when the store failed, so some may have taken effect; their idempotency keys make a redelivery safe: deliver the items again once the store is back (a write that was in flight is reconciled once its lease, the request timeout plus a margin, ends).`;
		return new StoreUnavailableError(error.message, hint.trim(), { cause: error.cause ?? error });
	}
}
