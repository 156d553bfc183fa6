import { closeSucceededDeadLetters } from '../deadletter';
import type { Store } from '../store';
import { storableValue } from '../store/storable';
import { heldId, type RunLeases } from './lease';
import { parkFailed } from './park';
import { keyIdOf, type Settlement } from './runState';
import { abandonKeySql, readKeySql, settleKeysSql } from './sql';
import {
	FailureClass,
	type WriteContext,
	type WriteFailure,
	type WriteOutcome,
	type WriteRequest,
} from './types';

/**
 * A run's waves. What finishes (settlements, items to park, successes) waits for the next wave,
 * which records it with a statement of each; a wave runs every third of the shortest lease and
 * once at the end, and each wave also renews the leases of every record the run still holds.
 */
export class Waves {
	/** The first store failure: it ends the run, so no wave and no lane goes on after it. */
	fatal: unknown;
	private settlements: Array<{ settlement: Settlement; outcome: WriteOutcome }> = [];
	private toPark: Array<{ outcome: WriteFailure; request: WriteRequest; always?: boolean }> = [];
	private succeededKeys = new Map<string, { scope: string; key: string }>();
	/** Keys (scope and key) whose settle found another owner: their success is not this run's to report. */
	private readonly supersededKeys = new Set<string>();
	/**
	 * Successes this run proved (an answer, or a lookup that found the effect) whose settle found
	 * the record held by another owner: settled once that owner has settled or is gone.
	 */
	private proven: Settlement[] = [];
	/** Keys whose settle as succeeded already closed their open dead letters, in that statement. */
	private readonly closedBySettle = new Set<string>();
	private flushing: Promise<void> | undefined;
	private timer: NodeJS.Timeout | undefined;
	private stopped = false;

	constructor(
		private readonly store: Store,
		private readonly context: WriteContext,
		private readonly leases: RunLeases,
	) {}

	/** Whether a settle of this run recorded a success, and so ended the breaker's streak. */
	get settledSuccess(): boolean {
		return this.closedBySettle.size > 0;
	}

	/** Records an owner's outcome for its key in the next wave. */
	settle(settlement: Settlement, outcome: WriteOutcome): void {
		this.settlements.push({ settlement, outcome });
	}

	/** Parks a failed item in the next wave (unless the run only routes its failures). */
	park(outcome: WriteFailure, request: WriteRequest): void {
		this.toPark.push({ outcome, request });
	}

	/** Parks a failed item in the next wave, though the run only routes: its route will not run. */
	parkUnrouted(outcome: WriteFailure, request: WriteRequest): void {
		this.toPark.push({ outcome, request, always: true });
	}

	/**
	 * A succeeded item (or one that stopped waiting for an owner that may yet succeed): the next
	 * wave, after its parks, closes the key's open dead letters if its record says succeeded.
	 */
	succeeded(request: WriteRequest): void {
		this.succeededKeys.set(keyIdOf(request), { scope: request.scope, key: request.key });
	}

	/** Waves: a third of the shortest lease apart, while the run is alive. */
	schedule(): void {
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

	/**
	 * One wave: settle (closing the dead letters of what this run settled as succeeded), park,
	 * close the dead letters of what succeeded without a settle here (answered from its record),
	 * renew what is still held.
	 */
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
				// A superseded owner's failed item is parked too: the key's record may say unknown,
				// or succeeded for another request, and the item must be in a letter. The letter is
				// the key's (one open record per key), and it closes below, or when the new owner
				// succeeds, once the record says succeeded for this same request.
				const park = toPark;
				// Items the gate held are parked as held (the resume or the breaker's close releases
				// them to replay) unless the run only routes its failures: then its caller retries
				// them (the Outbox relay does), and a letter would replay what is already delivered.
				for (const hold of [undefined, 'pause', 'breaker'] as const) {
					const group = park.filter(
						({ outcome, always }) => outcome.hold === hold && (this.context.park || always),
					);
					if (group.length > 0) await parkFailed(this.store, this.context, group, hold);
				}
				// Only a success this owner recorded closes records: a superseded owner's 201 is an
				// observation, and the record (perhaps unknown to the new owner) is what a person reads.
				// A key's settle is in the same wave as its success or an earlier one.
				await this.closeSucceeded([
					...succeeded.filter(
						({ scope, key }) =>
							!this.supersededKeys.has(heldId(scope, key)) &&
							!this.closedBySettle.has(heldId(scope, key)),
					),
					// Another owner may have finished this same request before the park committed (a
					// superseded owner's, or one that took over the record this run settled unknown, or
					// the owner this run waited on past its deadline): its close ran before this letter
					// existed, so this one closes it. Either that owner's close sees the letter or this
					// close sees its success: each runs after its own write commits.
					...park.map(({ request }) => ({
						scope: request.scope,
						key: request.key,
						fingerprint: request.fingerprint,
					})),
				]);
				// An owner that lost a record learns it at its next attempt start or settle.
				await this.leases.renew();
			} catch (error) {
				this.fatal ??= error;
			}
		});
		return this.flushing;
	}

	/**
	 * Writes a wave's settlements. An item's outcome (absent for a proven success settled after
	 * its item already ended) is marked superseded where another owner took its key over.
	 */
	private async settleWave(
		wave: Array<{ settlement: Settlement; outcome?: WriteOutcome }>,
	): Promise<void> {
		if (wave.length === 0) return;
		for (const { settlement } of wave) this.leases.release(settlement.scope, settlement.key);
		const rows = await this.store.query<{
			scope: string;
			key: string;
			settled: boolean;
			owner: string | null;
		}>(
			settleKeysSql(this.store, {
				settlements: wave.map(({ settlement }) => storableValue(settlement)),
				retentionDays: this.context.retentionDays,
				...this.closeReason(),
				breakerIntegration: this.context.breaker ? (this.context.integration ?? null) : null,
			}),
		);
		const byKey = new Map(rows.map((r) => [`${r.scope}\u0000${r.key}`, r]));
		for (const { settlement, outcome } of wave) {
			const row = byKey.get(`${settlement.scope}\u0000${settlement.key}`);
			if (row?.settled) {
				if (settlement.outcome === 'succeeded')
					this.closedBySettle.add(heldId(settlement.scope, settlement.key));
				continue;
			}
			// Superseded: recorded as an observation; the new owner's result decides the item.
			if (settlement.outcome === 'succeeded') this.proven.push(settlement);
			this.supersededKeys.add(heldId(settlement.scope, settlement.key));
			if (!outcome) continue;
			outcome.superseded = true;
			if (!outcome.ok) {
				outcome.failure = {
					class: FailureClass.superseded,
					message: `execution ${row?.owner ?? '?'} took key ${settlement.key} over while this one wrote; its result decides (this one saw: ${outcome.failure?.message ?? 'no answer'})`,
				};
			}
		}
	}

	/**
	 * The run's proven successes whose records another owner took over, once that owner is done.
	 * The new owner, alive, reconciles and settles the key itself; one that died leaves its lease
	 * to lapse and then, abandoned, the record says unknown with no owner, though this run saw the
	 * effect: nobody would ever settle it, and its item would be in no letter. So each is polled
	 * until it is settled by someone, or its owner's lease lapsed (then abandoned, fenced by the
	 * generation read) and it is settled here as succeeded, which the settle allows for an unknown
	 * record of the same request. Bounded by `keepWaiting` (the run's deadline, and not stopped):
	 * past it the record is left to its owner and its execution's error workflow.
	 *
	 * Timeline: A sends, its answer is lost; A stalls past its lease; B finds the lease lapsed,
	 * abandons (unknown) and takes over (in progress, generation 2); B dies; A's lookup finds the
	 * effect, its settle is refused (generation 2 holds it); B's lease lapses; A abandons
	 * generation 2 (unknown) and settles it succeeded.
	 */
	async settleProven(
		keepWaiting: () => boolean,
		sleep: (ms: number) => Promise<void>,
	): Promise<void> {
		const pending = this.proven;
		this.proven = [];
		for (const settlement of pending) {
			for (;;) {
				const [row] = await this.store.query<{
					status: string;
					generation: string;
					lease_expired: boolean | null;
				}>(readKeySql(this.store, { scope: settlement.scope, key: settlement.key }));
				if (!row || (row.status !== 'in_progress' && row.status !== 'unknown')) break;
				if (row.status === 'unknown') {
					await this.settleWave([{ settlement }]);
					break;
				}
				if (row.lease_expired) {
					await this.store.query(
						abandonKeySql(this.store, {
							scope: settlement.scope,
							key: settlement.key,
							generation: row.generation,
						}),
					);
					continue;
				}
				if (!keepWaiting()) break;
				await sleep(100);
			}
		}
	}

	/**
	 * An item parked by an earlier delivery that has now succeeded is done: close its record. Only
	 * while the key's record still says succeeded: a success replayed from a record that has since
	 * passed its retention and been claimed again speaks of the earlier operation, and the letters
	 * of the new one are the new one's.
	 */
	private async closeSucceeded(
		keys: Array<{ scope: string; key: string; fingerprint?: string }>,
	): Promise<void> {
		if (keys.length === 0) return;
		await closeSucceededDeadLetters(this.store, { ...this.closeReason(), keys });
	}

	/** Whose letters a success closes (workflow, step) and what their audit event says. */
	private closeReason(): { workflowId: string; step: string; actor: string; reason: string } {
		return {
			workflowId: this.context.workflowId ?? 'unsaved',
			step: this.context.node,
			actor: 'Idempotent HTTP Write',
			reason: `succeeded on a later delivery (execution ${this.context.executionId})`,
		};
	}
}
