import type { Store } from '../store';
import { renewLeasesSql, startAttemptsSql } from './sql';

/**
 * The leases a run holds. A record claimed (or taken over) by the run stays held while the run
 * lives: every wave renews all of them in one statement, so an item waiting behind the run's
 * concurrency never loses its claim. Before each attempt the item's lease is stretched over the
 * attempt (timeout plus margin) by a fenced statement; attempts that start together share one
 * statement, like a group commit: the first goes at once, those that arrive while it runs go
 * together next. The first attempt of an item sent at once was started by its claim, which
 * needs no statement here while the claim's lease still covers the attempt.
 */
export interface Held {
	scope: string;
	key: string;
	generation: number;
	/** Lease length: the attempt's timeout plus the margin. */
	leaseMs: number;
	timeoutMs: number;
}

export const heldId = (scope: string, key: string): string => `${scope}\u0000${key}`;

interface Waiting {
	held: Held;
	resolve(result: AttemptStart): void;
	reject(error: unknown): void;
}

/** Whether the owner still holds the record, and until when (local clock) its lease is sure. */
export type AttemptStart = { owned: true; validUntil: number } | { owned: false };

export class RunLeases {
	private readonly held = new Map<string, Held>();
	private waiting: Waiting[] = [];
	private pumping = false;

	constructor(
		private readonly store: Store,
		readonly now: () => number,
	) {}

	hold(held: Held): void {
		this.held.set(heldId(held.scope, held.key), held);
	}

	release(scope: string, key: string): void {
		this.held.delete(heldId(scope, key));
	}

	get size(): number {
		return this.held.size;
	}

	/** The shortest lease held: the run renews at a third of it. */
	get shortestLeaseMs(): number | undefined {
		let shortest: number | undefined;
		for (const held of this.held.values()) shortest = Math.min(shortest ?? Infinity, held.leaseMs);
		return shortest;
	}

	/** Starts an attempt if the record is still this owner's; never sends on a lost fence. */
	startAttempt(held: Held): Promise<AttemptStart> {
		return new Promise((resolve, reject) => {
			this.waiting.push({ held, resolve, reject });
			if (!this.pumping) void this.pump();
		});
	}

	private async pump(): Promise<void> {
		this.pumping = true;
		try {
			while (this.waiting.length > 0) {
				const batch = this.waiting;
				this.waiting = [];
				const sentAt = this.now();
				try {
					const rows = await this.store.query<{ scope: string; key: string }>(
						startAttemptsSql(this.store, {
							records: batch.map(({ held }) => ({
								scope: held.scope,
								key: held.key,
								generation: held.generation,
								lease_ms: held.leaseMs,
								timeout_ms: held.timeoutMs,
							})),
						}),
					);
					const started = new Set(rows.map((row) => heldId(row.scope, row.key)));
					for (const { held, resolve } of batch) {
						const id = heldId(held.scope, held.key);
						if (started.has(id)) {
							resolve({ owned: true, validUntil: sentAt + held.leaseMs });
						} else {
							this.held.delete(id);
							resolve({ owned: false });
						}
					}
				} catch (error) {
					for (const { reject } of batch) reject(error);
				}
			}
		} finally {
			this.pumping = false;
		}
	}

	/** Renews every held lease in one statement; returns the records this run no longer holds. */
	async renew(): Promise<Held[]> {
		const all = [...this.held.values()];
		if (all.length === 0) return [];
		const rows = await this.store.query<{ scope: string; key: string }>(
			renewLeasesSql(this.store, {
				records: all.map((held) => ({
					scope: held.scope,
					key: held.key,
					generation: held.generation,
					lease_ms: held.leaseMs,
				})),
			}),
		);
		const renewed = new Set(rows.map((row) => heldId(row.scope, row.key)));
		const lost = all.filter((held) => !renewed.has(heldId(held.scope, held.key)));
		for (const held of lost) this.held.delete(heldId(held.scope, held.key));
		return lost;
	}
}
