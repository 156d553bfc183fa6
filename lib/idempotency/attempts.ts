import { StoreUnavailableError } from '../errors';
import { claimKeyAgain, gateHold } from './claim';
import { type KeyRow, readKeyRow } from './keyRow';
import type { Held } from './lease';
import { lookup } from './lookup';
import { compensatedKey, conflictWithSuccess, ItemOutcomes, type Owned } from './outcomes';
import { fromSaved } from './responses';
import { inFlightGraceOf, leaseOf, type RunState, timeoutOf } from './runState';
import { sendLoop } from './send';
import { abandonKeySql, takeOverSql } from './sql';
import {
	type Failure,
	FailureClass,
	KeyStatus,
	UnknownOutcomeStrategy,
	type WriteOutcome,
	type WriteRequest,
} from './types';

/**
 * One item of a run, from the record the claim found to its outcome: replay a saved response,
 * wait for another owner, reconcile an unknown outcome, refuse a conflict, or send with
 * retries. Every path is bounded by the same attempt cap and deadline, and every send is
 * preceded by a fenced attempt start, so an owner that lost the key never sends.
 */
export class ItemWrite {
	private readonly item: ItemOutcomes;

	constructor(
		private readonly run: RunState,
		private readonly request: WriteRequest,
	) {
		this.item = new ItemOutcomes(run, request);
	}

	/**
	 * The item to its outcome. Anything unexpected (a bug, an answer nothing foresaw) ends this
	 * item alone: its record, if it holds one, is settled unknown when a request went out (from
	 * this run, or from an earlier one whose outcome this run took over) and failed when none
	 * did, and the item is parked with what is known.
	 */
	async write(first: KeyRow): Promise<WriteOutcome> {
		try {
			return await this.fromRow(first);
		} catch (error) {
			if (error instanceof StoreUnavailableError) throw error;
			const cause = error instanceof Error ? error.message : String(error);
			const sent = this.item.sent;
			const owned = this.item.owned;
			const failure: Failure =
				sent > 0
					? {
							class: FailureClass.unknownOutcome,
							message: `the write failed after a request was sent, so the effect may exist: ${cause}`,
						}
					: owned?.lostEarlier
						? {
								class: FailureClass.unknownOutcome,
								message: `the write failed while reconciling an earlier attempt whose response was lost, so the effect may exist: ${cause}`,
							}
						: {
								class: FailureClass.permanent,
								message: `the write failed before anything was sent: ${cause}`,
							};
			if (owned)
				return this.item.settleFail(
					owned,
					failure.class === FailureClass.unknownOutcome ? 'unknown' : 'failed',
					failure,
				);
			return this.item.fail(sent, failure);
		}
	}

	/** Decides from the record the claim found; loops only while the record changes under it. */
	private async fromRow(first: KeyRow): Promise<WriteOutcome> {
		let row = first;
		for (;;) {
			if (row.claimed) return await this.send(this.holdFrom(row));
			if (row.status === KeyStatus.succeeded) return this.replayOrConflict(row);
			if (row.status === KeyStatus.compensated) {
				return this.item.fail(0, {
					class: FailureClass.conflict,
					message: compensatedKey(this.request.key, row),
				});
			}
			if (
				row.status === KeyStatus.unknown ||
				(row.status === KeyStatus.inProgress && row.lease_expired)
			) {
				return await this.reconcileUnknown(row);
			}
			if (row.status === KeyStatus.inProgress) {
				if (row.fingerprint !== this.request.fingerprint) {
					return this.item.fail(0, {
						class: FailureClass.conflict,
						message: `key ${this.request.key} is being written by another execution with a different request`,
					});
				}
				const next = await this.waitForOwner(row);
				if (!next) {
					const outcome = this.item.fail(0, {
						class: FailureClass.unknownOutcome,
						message: `key ${this.request.key} was still in progress elsewhere (execution ${row.execution_id ?? '?'}) when the deadline of ${Math.round(this.run.context.policy.deadlineMs / 1000)} s was reached`,
					});
					return { ...outcome, waitedOn: true };
				}
				row = next;
				continue;
			}
			// Failed meanwhile (claimable again) or gone: claim it for this run.
			if (this.run.now() >= this.item.deadlineAt) {
				return this.item.fail(0, {
					class: FailureClass.exhausted,
					message: `key ${this.request.key} could not be claimed before the deadline`,
				});
			}
			const again = await claimKeyAgain(this.run, this.request);
			// Paused or breaker open: the key stays unclaimed and the item is held, not sent.
			const held = again.claimed ? undefined : gateHold(this.run.context.integration, again);
			if (held && (again.status === null || again.status === KeyStatus.failed)) {
				const outcome = this.item.fail(0, {
					class: FailureClass.paused,
					message: held.message,
					retryAt: held.retryAt,
				});
				return { ...outcome, hold: held.hold };
			}
			row = again;
		}
	}

	/** Decides again from the record as it reads now. */
	private async fromRecord(): Promise<WriteOutcome> {
		return await this.fromRow(await readKeyRow(this.run.store, this.request));
	}

	private send(owned: Owned): Promise<WriteOutcome> {
		return sendLoop(this.item, owned, () => this.fromRecord());
	}

	private holdFrom(row: KeyRow): Owned {
		const held: Held = {
			scope: this.request.scope,
			key: this.request.key,
			generation: Number(row.generation),
			leaseMs: leaseOf(this.run.context, this.request),
			timeoutMs: timeoutOf(this.request),
		};
		this.run.leases.hold(held);
		this.item.owned = { held, attempt: 0, lostEarlier: false, startedUntil: row.started_until };
		return this.item.owned;
	}

	private replayOrConflict(row: KeyRow): WriteOutcome {
		if (row.fingerprint !== this.request.fingerprint) {
			return this.item.fail(0, {
				class: FailureClass.conflict,
				message: conflictWithSuccess(this.request.key),
			});
		}
		return {
			index: this.request.index,
			key: this.request.key,
			ok: true,
			replayed: true,
			attempts: row.attempts ?? 0,
			durationMs: this.run.now() - this.item.started,
			answer: fromSaved(row),
		};
	}

	/** Polls a record another owner holds until it changes; undefined at the deadline. */
	private async waitForOwner(row: KeyRow): Promise<KeyRow | undefined> {
		let current = row;
		while (current.status === KeyStatus.inProgress && !current.lease_expired) {
			if (this.run.now() >= this.item.deadlineAt) return undefined;
			await this.run.sleep(Math.min(1_000, 100 + Math.floor(this.run.random() * 200)));
			current = await readKeyRow(this.run.store, this.request);
		}
		return current;
	}

	/**
	 * An unknown outcome (a lost response, a dead owner): the effect may exist. Park, or take the
	 * record over (fenced: of two takers one wins), wait until the last attempt can no longer
	 * land, then look the effect up or resend with the same key.
	 */
	private async reconcileUnknown(row: KeyRow): Promise<WriteOutcome> {
		const { store, context } = this.run;
		const request = this.request;
		if (row.status === KeyStatus.inProgress) {
			// Its owner is gone: first record what is known (nothing sent: failed; else unknown).
			await store.query(
				abandonKeySql(store, {
					scope: request.scope,
					key: request.key,
					generation: row.generation,
				}),
			);
			return await this.fromRecord();
		}
		const strategy = context.onUnknown;
		if (row.fingerprint !== request.fingerprint && strategy !== UnknownOutcomeStrategy.lookup) {
			return this.item.fail(0, {
				class: FailureClass.conflict,
				message: `an earlier request with key ${request.key} carried a different request and its outcome is unknown: check the target, then resolve or replay`,
			});
		}
		if (strategy === UnknownOutcomeStrategy.park) {
			return this.item.fail(0, {
				class: FailureClass.unknownOutcome,
				message: `an earlier attempt on key ${request.key} ended without an answer: the effect may exist; check the target, then replay`,
			});
		}
		const [taken] = await store.query<{ generation: string }>(
			takeOverSql(store, {
				scope: request.scope,
				key: request.key,
				generation: row.generation,
				executionId: context.executionId,
				leaseMs: leaseOf(context, request),
				workflowId: context.workflowId ?? null,
				node: context.node,
			}),
		);
		if (!taken) return await this.fromRecord();
		const owned = this.holdFrom({ ...row, generation: Number(taken.generation) });
		owned.lostEarlier = true;

		if (strategy === UnknownOutcomeStrategy.lookup && this.run.deps.lookup) {
			// A lookup is only exact once the last attempt can no longer land: wait that out. A
			// resend with the same key need not wait: the target answers it from the key.
			const waitMs = Math.max(0, Number(row.in_flight_ms ?? 0)) + inFlightGraceOf(context);
			if (this.run.now() + waitMs >= this.item.deadlineAt) {
				return this.item.settleFail(owned, 'unknown', {
					class: FailureClass.unknownOutcome,
					message: `an earlier attempt on key ${request.key} may still land within ${Math.ceil(waitMs / 1000)} s, after the deadline: check the target, then replay`,
				});
			}
			await this.run.sleep(waitMs);
			const found = await lookup(this.item, owned);
			if (found) return found;
		}
		return await this.send(owned);
	}
}
