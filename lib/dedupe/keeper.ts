import type { Store } from '../store';
import { renewExecutionClaimsSql } from './sql';

/**
 * Keeps the inbox claims of the executions running in this process: every third of the lease,
 * one statement renews the claims of all of them. An execution that ends is dropped (its claims
 * are settled by how it ended); one that never ends is dropped after its longest hold, so a
 * hung execution's claims lapse too. When the process dies, nothing renews them: their leases
 * end, and Recover takes the items over.
 */
interface Kept {
	until: number;
}

export class ClaimKeeper {
	private readonly kept = new Map<string, Kept>();
	private timer: NodeJS.Timeout | undefined;
	/** The store stays open while it keeps anything (the idle sweeper must not close it). */
	private release: (() => void) | undefined;

	constructor(
		private readonly store: Store,
		private readonly leaseSeconds: number,
	) {}

	/** Keeps an execution's claims alive for at most `maxHoldMs`. */
	keep(executionId: string, maxHoldMs: number): void {
		const until = Date.now() + maxHoldMs;
		const kept = this.kept.get(executionId);
		if (!kept || kept.until < until) this.kept.set(executionId, { until });
		this.release ??= this.store.hold();
		this.timer ??= setInterval(
			() => void this.beat(),
			Math.max(1_000, (this.leaseSeconds * 1000) / 3),
		);
		this.timer.unref?.();
	}

	drop(executionId: string): void {
		this.kept.delete(executionId);
		if (this.kept.size === 0 && this.timer) {
			clearInterval(this.timer);
			this.timer = undefined;
			this.release?.();
			this.release = undefined;
		}
	}

	get executions(): string[] {
		return [...this.kept.keys()];
	}

	/** One renewal for every kept execution; a failed beat is retried at the next one. */
	async beat(): Promise<void> {
		const now = Date.now();
		for (const [executionId, kept] of this.kept) if (kept.until < now) this.drop(executionId);
		if (this.kept.size === 0) return;
		await this.store
			.execute(
				renewExecutionClaimsSql(this.store, {
					executionIds: this.executions,
					leaseSeconds: this.leaseSeconds,
				}),
			)
			.catch(() => undefined);
	}
}

const keepers = new WeakMap<Store, Map<number, ClaimKeeper>>();

/** The keeper of one store and lease length, shared by every execution of this process. */
export function keeperFor(store: Store, leaseSeconds: number): ClaimKeeper {
	let byLease = keepers.get(store);
	if (!byLease) keepers.set(store, (byLease = new Map()));
	let keeper = byLease.get(leaseSeconds);
	if (!keeper) byLease.set(leaseSeconds, (keeper = new ClaimKeeper(store, leaseSeconds)));
	return keeper;
}
