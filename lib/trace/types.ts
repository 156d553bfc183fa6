import type { AttemptEntry } from '../idempotency/types';
import type { TraceMatch } from './sql';

/** What Trace answers: the entries of one item's timeline and where the item stands. */
export const TraceEntryKind = {
	claim: 'claim',
	write: 'write',
	deadLetter: 'dead_letter',
} as const;
export type TraceEntryKind = (typeof TraceEntryKind)[keyof typeof TraceEntryKind];

/** Where one record stands, as an operator asks it. */
export const TraceState = {
	/** Held by a running execution (its lease is live). */
	inFlight: 'in_flight',
	done: 'done',
	/** Ended in an error; a redelivery or a replay may take it again. */
	failed: 'failed',
	/** In progress, but its execution stopped holding it (the lease ended): it died or stalled. */
	crashed: 'crashed',
	/** A write that may or may not have taken effect: reconciled before anything is resent. */
	unknown: 'unknown',
	/** A dead letter waiting for a person (or a replay). */
	parked: 'parked',
	/** A dead letter held while its integration is paused or its breaker open. */
	held: 'held',
	/** A dead letter replayed, resolved or abandoned; a write whose effect Compensate reversed. */
	closed: 'closed',
} as const;
export type TraceState = (typeof TraceState)[keyof typeof TraceState];

interface EntryBase {
	kind: TraceEntryKind;
	/** When the record began: the claim, the key's first claim, the parking. ISO 8601. */
	at: string;
	state: TraceState;
	workflowId: string | null;
	executionId: string | null;
	/** The n8n execution's page, when the workflow and execution are known (and a base URL given). */
	executionLink: string | null;
	/** Whether the record carries the whole ID, or contains it. */
	matched: TraceMatch;
}

export interface ClaimEntry extends EntryBase {
	kind: 'claim';
	consumer: string;
	eventId: string;
	status: string;
	leaseUntil: string;
	completedAt: string | null;
	/** The execution that first claimed it (a recovery takes the claim over and keeps this). */
	originExecutionId: string | null;
	originExecutionLink: string | null;
	recoverAttempts: number;
	lastError: string | null;
	/** Whether the inbox kept the item (null: a claim mode without the inbox). */
	itemKept: boolean | null;
}

export interface WriteEntry extends EntryBase {
	kind: 'write';
	scope: string;
	step: string | null;
	key: string;
	status: string;
	attempts: number;
	/** Each attempt (and each observation of a superseded owner), oldest first. */
	history: AttemptEntry[];
	lastError: string | null;
	/** The saved response's status and size; the body itself is not shown. */
	response: { status: number; bytes: number; truncated: boolean } | null;
	leaseUntil: string;
	completedAt: string | null;
}

export interface DeadLetterHistoryEntry {
	at: string;
	actor: string;
	fromStatus: string | null;
	toStatus: string;
	reason: string | null;
}

export interface DeadLetterEntry extends EntryBase {
	kind: 'dead_letter';
	id: string;
	status: string;
	step: string;
	workflowName: string | null;
	idempotencyKey: string | null;
	errorClass: string;
	message: string | null;
	errorStatus: number | null;
	attempts: number;
	failureCount: number;
	closedAt: string | null;
	history: DeadLetterHistoryEntry[];
}

export type TraceEntry = ClaimEntry | WriteEntry | DeadLetterEntry;

export interface TraceResult {
	/** The business ID as searched. */
	query: string;
	/** How it matched: some record by the whole ID, records only by a part of it, or nothing. */
	match: TraceMatch | 'none';
	/** Where the item stands now, from its records: parked before crashed before in flight. */
	state: TraceState | null;
	entries: TraceEntry[];
	/** More records matched than the limit: the newest are shown. */
	truncated: boolean;
	limit: number;
}

export interface TraceOptions {
	/** n8n's base URL (e.g. https://n8n.example.com), for the execution links. */
	baseUrl?: string;
	/** The most entries returned; the newest are kept. */
	limit?: number;
	/** Field names to mask besides the default secret names (see lib/masking). */
	maskFields?: string[];
}
