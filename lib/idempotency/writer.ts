import {
	closeSucceededDeadLetters,
	type ItemStep,
	type ParkRequest,
	parkItems,
	releaseBreakerHolds,
} from '../deadletter';
import { StoreUnavailableError } from '../errors';
import { maskText } from '../masking';
import { inRange, LIMITS } from '../limits';
import { storableText, storableValue } from '../store/storable';
import { plainText } from '../describe';
import type { Store } from '../store';
import {
	ItemWrite,
	itemRefOf,
	keyIdOf,
	type KeyRow,
	leaseOf,
	type RunState,
	type Settlement,
	timeoutOf,
} from './attempts';
import { BreakerStreak, recordBreaker } from './breaker';
import type { Compensation } from './compensation';
import { checkedKey, MAX_KEY_LENGTH } from './keys';
import { RunLeases } from './lease';
import { fromSaved } from './responses';
import { claimKeysSql, gateSql, settleKeysSql, stepsOfItemsSql, succeededKeysSql } from './sql';
import {
	FailureClass,
	type WriteContext,
	type WriteDeps,
	type WriteOutcome,
	type WriteRequest,
} from './types';

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

class Run implements RunState {
	readonly leases: RunLeases;
	readonly streak = new BreakerStreak();
	readonly progress = { sent: 0 };
	readonly now: () => number;
	readonly sleep: (ms: number) => Promise<void>;
	readonly random: () => number;
	private settlements: Array<{ settlement: Settlement; outcome: WriteOutcome }> = [];
	private toPark: Array<{ outcome: WriteOutcome; request: WriteRequest }> = [];
	private succeededKeys = new Map<string, { scope: string; key: string }>();
	/** Keys whose settle found another owner: their success is not this run's to report. */
	private readonly supersededKeys = new Set<string>();
	private fatal: unknown;
	private flushing: Promise<void> | undefined;
	private timer: NodeJS.Timeout | undefined;
	private stopped = false;

	constructor(
		readonly store: Store,
		readonly context: WriteContext,
		readonly deps: WriteDeps,
	) {
		this.now = deps.now ?? Date.now;
		this.sleep = deps.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
		this.random = deps.random ?? Math.random;
		this.leases = new RunLeases(store, this.now);
	}

	settle(settlement: Settlement, outcome: WriteOutcome): void {
		this.settlements.push({ settlement, outcome });
	}

	async writeAll(all: WriteRequest[]): Promise<WriteOutcome[]> {
		// Items that could not become requests end alone: parked, nothing claimed or sent.
		for (const request of all) {
			if (request.invalid !== undefined) continue;
			const checked = checkedKey(request.key, false);
			if ('problem' in checked) request.invalid = `Item ${request.index}: ${checked.problem}`;
			else if (checked.key !== request.key)
				request.invalid = `Item ${request.index}: the idempotency key is longer than ${MAX_KEY_LENGTH} characters and was not hashed`;
		}
		const invalid = new Map(
			all
				.filter((r) => r.invalid !== undefined)
				.map((request): [number, WriteOutcome] => {
					const outcome: WriteOutcome = {
						index: request.index,
						key: request.key,
						ok: false,
						replayed: false,
						attempts: 0,
						durationMs: 0,
						failure: {
							class: FailureClass.invalid,
							message: maskText(request.invalid!, this.context.maskFields),
						},
					};
					this.toPark.push({ outcome, request });
					return [request.index, outcome];
				}),
		);
		const requests = all.filter((r) => r.invalid === undefined);
		const valid = await this.writeValid(requests);
		const byIndex = new Map(valid.map((o) => [o.index, o]));
		await this.flush();
		if (this.fatal) throw this.fatal;
		if (this.context.integration && this.context.breaker) {
			await recordBreaker(this.store, this.context.integration, this.streak, this.context.breaker);
		}
		return all.map((r) => invalid.get(r.index) ?? byIndex.get(r.index)!);
	}

	private async writeValid(requests: WriteRequest[]): Promise<WriteOutcome[]> {
		if (requests.length === 0) return [];
		const held = await this.gate(requests);
		if (held) return held;

		// Duplicate keys inside the run: the first occurrence does the work, the others share it.
		const firstByKey = new Map<string, WriteRequest>();
		for (const r of requests) if (!firstByKey.has(keyIdOf(r))) firstByKey.set(keyIdOf(r), r);
		const leaders = [...firstByKey.values()];
		const claims = await this.claim(leaders);
		this.schedule();

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
			if (!outcome.ok) this.toPark.push({ outcome, request });
			return outcome;
		});
	}

	/**
	 * A paused integration or an open breaker: hold every item, call nothing. Otherwise, items
	 * an earlier breaker held whose cool-down is over go back to replay.
	 */
	private async gate(requests: WriteRequest[]): Promise<WriteOutcome[] | undefined> {
		const integration = this.context.integration;
		if (!integration) return undefined;
		const [gate] = await this.store.query<{
			paused: boolean;
			paused_by: string | null;
			pause_reason: string | null;
			open_until: Date | null;
			breaker_holds: boolean;
		}>(gateSql(this.store), [integration, storableText(plainText(integration))]);
		const pause = gate.paused
			? { changedBy: gate.paused_by ?? '', reason: gate.pause_reason }
			: undefined;
		const openUntil = pause ? undefined : (gate.open_until ?? undefined);
		if (!pause && !openUntil) {
			if (this.context.breaker && gate.breaker_holds) {
				await releaseBreakerHolds(this.store, {
					integration,
					actor: 'Idempotent HTTP Write',
					reason: `circuit breaker of ${integration} closed`,
				});
			}
			return undefined;
		}
		const message = pause
			? `integration ${integration} is paused by ${pause.changedBy}: ${pause.reason ?? ''}`.trim()
			: `circuit breaker for ${integration} is open until ${openUntil!.toISOString()}`;
		// What already succeeded is answered from its saved response: it needs no call, and holding
		// it would put done work back in a queue.
		const done = new Map(
			(
				await this.store.query<KeyRow & { scope: string; key: string }>(
					succeededKeysSql(this.store),
					[
						JSON.stringify(
							requests.map((r) => ({ scope: r.scope, key: r.key, fingerprint: r.fingerprint })),
						),
					],
				)
			).map((row) => [`${row.scope}\u0000${row.key}`, row]),
		);
		const held = requests.filter((r) => !done.has(keyIdOf(r)));
		const heldOutcomes = held.map((r): WriteOutcome => ({
			index: r.index,
			key: r.key,
			ok: false,
			replayed: false,
			attempts: 0,
			durationMs: 0,
			failure: {
				class: FailureClass.paused,
				message: maskText(message, this.context.maskFields),
				retryAt: openUntil,
			},
		}));
		if (held.length > 0) {
			await this.park(
				heldOutcomes.map((outcome, i) => ({ outcome, request: held[i] })),
				pause ? 'pause' : 'breaker',
			);
		}
		return requests.map((r) => {
			const saved = done.get(keyIdOf(r));
			if (!saved) return heldOutcomes[held.indexOf(r)];
			this.succeededKeys.set(keyIdOf(r), { scope: r.scope, key: r.key });
			return {
				index: r.index,
				key: r.key,
				ok: true,
				replayed: true,
				attempts: saved.attempts ?? 0,
				durationMs: 0,
				answer: fromSaved(saved),
			};
		});
	}

	private async claim(leaders: WriteRequest[]): Promise<Map<number, KeyRow>> {
		const rows = await this.store.query<KeyRow & { ord: number }>(claimKeysSql(this.store), [
			JSON.stringify(
				leaders.map((r, ord) => ({
					ord,
					scope: r.scope,
					key: r.key,
					fingerprint: r.fingerprint,
					lease_ms: leaseOf(this.context, r),
					timeout_ms: timeoutOf(r),
				})),
			),
			this.context.workflowId ?? null,
			this.context.executionId,
			this.context.node,
			this.context.retentionDays,
		]);
		// Claimed records are held from now on, also while they wait for a lane: the waves renew them.
		for (const row of rows) {
			if (!row.claimed) continue;
			const request = leaders[row.ord];
			this.leases.hold({
				scope: request.scope,
				key: request.key,
				generation: Number(row.generation),
				leaseMs: leaseOf(this.context, request),
				timeoutMs: timeoutOf(request),
			});
		}
		return new Map(rows.map((row) => [row.ord, row]));
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
		const limit = Math.max(1, Math.min(this.context.concurrency, items.length));
		await Promise.all(
			Array.from({ length: limit }, async () => {
				while (next < items.length && !this.fatal) {
					const at = next++;
					try {
						results[at] = await work(items[at], at);
					} catch (error) {
						this.fatal ??= error;
					}
				}
			}),
		);
		if (this.fatal) throw this.fatal;
		return results;
	}

	/** One item to its outcome; anything unexpected ends this item, never the run (but a store failure does). */
	private async writeItem(request: WriteRequest, row: KeyRow): Promise<WriteOutcome> {
		const outcome = await new ItemWrite(this, request).write(row);
		if (outcome.ok)
			this.succeededKeys.set(keyIdOf(request), { scope: request.scope, key: request.key });
		else this.toPark.push({ outcome, request });
		return outcome;
	}

	/** The outcome of a later copy of a key in the same run: the first copy's. */
	private shared(request: WriteRequest, lead: WriteRequest, outcome: WriteOutcome): WriteOutcome {
		if (lead.fingerprint !== request.fingerprint) {
			return {
				index: request.index,
				key: request.key,
				ok: false,
				replayed: false,
				attempts: 0,
				durationMs: 0,
				failure: {
					class: FailureClass.conflict,
					message: `key ${request.key} appears twice in this run with different requests`,
				},
			};
		}
		if (!outcome.ok) {
			return {
				...outcome,
				index: request.index,
				failure: { ...outcome.failure!, deadLetterId: undefined },
			};
		}
		return { ...outcome, index: request.index, replayed: true, durationMs: 0 };
	}

	/** Waves: a third of the shortest lease apart, while the run is alive. */
	private schedule(): void {
		const shortest = this.leases.shortestLeaseMs;
		if (this.stopped || shortest === undefined) return;
		this.timer = setTimeout(
			() => {
				void this.flush().then(() => this.schedule());
			},
			Math.max(50, Math.floor(shortest / 3)),
		);
		this.timer.unref?.();
	}

	stop(): void {
		this.stopped = true;
		if (this.timer) clearTimeout(this.timer);
	}

	/** One wave: settle, park, close the dead letters of what succeeded, renew what is still held. */
	flush(): Promise<void> {
		this.flushing = (this.flushing ?? Promise.resolve()).then(async () => {
			if (this.fatal) return;
			// What has finished so far; items finishing meanwhile go to the next wave.
			const settlements = this.settlements;
			const toPark = this.toPark;
			const succeeded = [...this.succeededKeys.values()];
			this.settlements = [];
			this.toPark = [];
			this.succeededKeys = new Map();
			try {
				await this.settleWave(settlements);
				// A superseded owner parks nothing: the new owner's result decides the item.
				const park = toPark.filter(({ outcome }) => !outcome.superseded);
				if (park.length > 0 && this.context.park) await this.park(park);
				// Only a success this owner recorded closes records: a superseded owner's 201 is an
				// observation, and the record (perhaps unknown to the new owner) is what a person reads.
				// A key's settle is in the same wave as its success or an earlier one.
				await this.closeSucceeded(succeeded.filter(({ key }) => !this.supersededKeys.has(key)));
				// An owner that lost a record learns it at its next attempt start or settle.
				await this.leases.renew();
			} catch (error) {
				this.fatal ??= error;
			}
		});
		return this.flushing;
	}

	private async settleWave(
		wave: Array<{ settlement: Settlement; outcome: WriteOutcome }>,
	): Promise<void> {
		if (wave.length === 0) return;
		for (const { settlement } of wave) this.leases.release(settlement.scope, settlement.key);
		const rows = await this.store.query<{
			scope: string;
			key: string;
			settled: boolean;
			owner: string | null;
		}>(settleKeysSql(this.store), [
			JSON.stringify(wave.map(({ settlement }) => storableValue(settlement))),
			this.context.retentionDays,
		]);
		const byKey = new Map(rows.map((r) => [`${r.scope}\u0000${r.key}`, r]));
		for (const { settlement, outcome } of wave) {
			const row = byKey.get(`${settlement.scope}\u0000${settlement.key}`);
			if (row?.settled) continue;
			// Superseded: recorded as an observation; the new owner's result decides the item.
			outcome.superseded = true;
			this.supersededKeys.add(settlement.key);
			if (!outcome.ok) {
				outcome.failure = {
					class: FailureClass.superseded,
					message: `execution ${row?.owner ?? '?'} took key ${settlement.key} over while this one wrote; its result decides (this one saw: ${outcome.failure?.message ?? 'no answer'})`,
				};
			}
		}
	}

	/**
	 * An item parked by an earlier delivery that has now succeeded is done: close its record. Only
	 * while the key's record still says succeeded: a success replayed from a record that has since
	 * passed its retention and been claimed again speaks of the earlier operation, and the letters
	 * of the new one are the new one's.
	 */
	private async closeSucceeded(keys: Array<{ scope: string; key: string }>): Promise<void> {
		if (keys.length === 0) return;
		await closeSucceededDeadLetters(this.store, {
			workflowId: this.context.workflowId ?? 'unsaved',
			step: this.context.node,
			keys,
			actor: 'Idempotent HTTP Write',
			reason: `succeeded on a later delivery (execution ${this.context.executionId})`,
		});
	}

	private async park(
		failed: Array<{ outcome: WriteOutcome; request: WriteRequest }>,
		hold?: 'pause' | 'breaker',
	): Promise<void> {
		const context = this.context;
		const steps = await this.stepsOf(failed.map(({ request }) => request));
		const requests: ParkRequest[] = failed.map(({ outcome, request }, ord) => ({
			workflowId: context.workflowId ?? 'unsaved',
			workflowName: context.workflowName,
			executionId: context.executionId,
			step: context.node,
			itemIndex: request.index,
			idempotencyKey: request.key || undefined,
			runLink: context.runLink,
			integration: context.integration,
			errorClass: outcome.failure!.class,
			errorMessage: outcome.failure!.message,
			errorStatus: outcome.failure!.status,
			attempts: outcome.attempts,
			// The configured text says what the steps before this one did; when this step's own
			// outcome is unknown, the record must not read as if its write certainly did not happen.
			alreadyHappened:
				outcome.failure!.class === FailureClass.unknownOutcome
					? [
							context.alreadyHappened,
							`${context.node} may have taken effect (its response was lost): check before replaying`,
						]
							.filter(Boolean)
							.join('; ')
					: context.alreadyHappened,
			impact: context.impact,
			owner: context.owner,
			status: hold ? 'held' : 'new',
			holdReason: hold,
			payload: request.payload,
			retryAfter: outcome.failure!.retryAt,
			retentionDays: 90,
			attemptHistory: outcome.history,
			sourceVersion: context.sourceVersion,
			steps: steps.get(ord),
		}));
		const results = await parkItems(this.store, requests, { maskFields: this.context.maskFields });
		results.forEach((result, i) => (failed[i].outcome.failure!.deadLetterId = result.id));
	}

	/** The earlier steps of each failed item (by its position), from the keys its steps recorded. */
	private async stepsOf(requests: WriteRequest[]): Promise<Map<number, ItemStep[]>> {
		const rows = await this.store.query<{
			ord: number;
			scope: string;
			key: string;
			node: string | null;
			completed_at: Date | null;
			response_status: number | null;
			response_body: string | null;
			compensation: Compensation | null;
		}>(stepsOfItemsSql(this.store), [
			// Storable as the claims stored them: a key with an unpaired surrogate matches its record.
			JSON.stringify(
				storableValue(
					requests.map((request, ord) => ({
						ord,
						workflow_id: this.context.workflowId ?? null,
						item_ref: itemRefOf(request, this.context),
						scope: request.scope,
						key: request.key,
					})),
				),
			),
		]);
		const steps = new Map<number, ItemStep[]>();
		for (const row of rows) {
			const list = steps.get(row.ord) ?? [];
			list.push({
				scope: row.scope,
				key: row.key,
				step: row.node,
				completedAt: row.completed_at ? new Date(row.completed_at).toISOString() : null,
				responseStatus: row.response_status,
				response: row.response_body,
				compensation: row.compensation,
			});
			steps.set(row.ord, list);
		}
		return steps;
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
