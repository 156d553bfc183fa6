import type { Store } from '../store';
import type { BreakerStreak } from './breaker';
import type { Compensation } from './compensation';
import { heldId, type RunLeases } from './lease';
import type { SavedResponse } from './responses';
import type { AttemptEntry, WriteContext, WriteDeps, WriteOutcome, WriteRequest } from './types';

/** What the items of one run share, and how long each item's record is held. */

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

/** How long after an attempt's window a late request may still land at the target. */
export const inFlightGraceOf = (context: WriteContext): number =>
	context.inFlightGraceMs ?? DEFAULT_IN_FLIGHT_GRACE_MS;

export const keyIdOf = (request: WriteRequest): string => heldId(request.scope, request.key);

/** The item a write is a step of: as given, else this execution's item at this index. */
export const itemRefOf = (request: WriteRequest, context: WriteContext): string =>
	request.itemRef ?? `${context.executionId}:${request.index}`;
