import type { AttemptEntry } from '../idempotency/types';
import { runLink } from '../runLink';
import {
	type ClaimEntry,
	type DeadLetterEntry,
	type DeadLetterHistoryEntry,
	type TraceEntry,
	TraceEntryKind,
	TraceState,
	type WriteEntry,
} from './types';

/** Rows of the store as timeline entries, and the state of the whole item. */
/** Below this a part matches too much to be an answer, and trigrams cannot serve it. */
export const TRACE_MIN_PART = 3;
export const MAX_QUERY_CHARS = 500;

/** The n8n execution page, as the nodes link it in their run links. */
const executionLink = (
	baseUrl: string | undefined,
	workflowId: string | null,
	executionId: string | null,
): string | null => (baseUrl ? (runLink(baseUrl, workflowId, executionId) ?? null) : null);

/** `%part%` for ILIKE, with the part's own wildcards taken literally. */
export const containsPattern = (part: string): string =>
	`%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export const iso = (value: unknown): string | null =>
	value === null || value === undefined ? null : new Date(value as string).toISOString();
export const text = (value: unknown): string | null =>
	value === null || value === undefined ? null : String(value);

export type Row = Record<string, unknown>;

/**
 * A claim's or a key record's state: what its status says when it is settled, else crashed when
 * its lease lapsed (the owner died), else in flight.
 */
function stateOf(row: Row, settled: Record<string, TraceState>): TraceState {
	return (
		settled[String(row.status)] ?? (row.lease_lapsed ? TraceState.crashed : TraceState.inFlight)
	);
}

export function claimEntry(row: Row, baseUrl: string | undefined): Omit<ClaimEntry, 'matched'> {
	const workflowId = text(row.workflow_id);
	const status = String(row.status);
	const state = stateOf(row, { done: TraceState.done, failed: TraceState.failed });
	const origin = text(row.origin_execution_id);
	return {
		kind: TraceEntryKind.claim,
		at: iso(row.claimed_at)!,
		state,
		workflowId,
		executionId: text(row.execution_id),
		executionLink: executionLink(baseUrl, workflowId, text(row.execution_id)),
		consumer: String(row.consumer),
		eventId: String(row.event_id),
		status,
		leaseUntil: iso(row.lease_until)!,
		completedAt: iso(row.completed_at),
		originExecutionId: origin,
		originExecutionLink: executionLink(baseUrl, workflowId, origin),
		recoverAttempts: Number(row.recover_attempts ?? 0),
		lastError: text(row.last_error),
		itemKept: row.payload_kept ? true : row.payload_bytes !== null ? false : null,
	};
}

export function writeEntry(row: Row, baseUrl: string | undefined): Omit<WriteEntry, 'matched'> {
	const workflowId = text(row.workflow_id);
	const status = String(row.status);
	const state = stateOf(row, {
		succeeded: TraceState.done,
		failed: TraceState.failed,
		unknown: TraceState.unknown,
		compensated: TraceState.closed,
	});
	return {
		kind: TraceEntryKind.write,
		at: iso(row.created_at)!,
		state,
		workflowId,
		executionId: text(row.execution_id),
		executionLink: executionLink(baseUrl, workflowId, text(row.execution_id)),
		scope: String(row.scope),
		step: text(row.node),
		key: String(row.key),
		status,
		attempts: Number(row.attempts ?? 0),
		history: Array.isArray(row.history) ? (row.history as AttemptEntry[]) : [],
		lastError: text(row.last_error),
		response:
			row.response_status === null || row.response_status === undefined
				? null
				: {
						status: Number(row.response_status),
						bytes: Number(row.response_bytes ?? 0),
						truncated: row.response_truncated === true,
					},
		leaseUntil: iso(row.lease_until)!,
		completedAt: iso(row.completed_at),
	};
}

const OPEN_DEAD_LETTER = ['new', 'being_fixed', 'replay_requested'];

export function deadLetterEntry(
	row: Row,
	history: DeadLetterHistoryEntry[],
	baseUrl: string | undefined,
): Omit<DeadLetterEntry, 'matched'> {
	const workflowId = text(row.workflow_id);
	const status = String(row.status);
	const runLink = text(row.run_link);
	return {
		kind: TraceEntryKind.deadLetter,
		at: iso(row.parked_at)!,
		state:
			status === 'held'
				? TraceState.held
				: OPEN_DEAD_LETTER.includes(status)
					? TraceState.parked
					: TraceState.closed,
		workflowId,
		executionId: text(row.execution_id),
		// The run link the record was parked with names the failed execution; only http(s) is a link.
		executionLink:
			runLink && /^https?:\/\//i.test(runLink)
				? runLink
				: executionLink(baseUrl, workflowId, text(row.execution_id)),
		id: String(row.id),
		status,
		step: String(row.step),
		workflowName: text(row.workflow_name),
		idempotencyKey: text(row.idempotency_key),
		errorClass: String(row.error_class),
		message: text(row.error_message),
		errorStatus: row.error_status === null ? null : Number(row.error_status),
		attempts: Number(row.attempts ?? 0),
		failureCount: Number(row.failure_count ?? 0),
		closedAt: iso(row.closed_at),
		history,
	};
}

/** The item's state from all its records: what a person must act on comes first. */
const STATE_PRECEDENCE: TraceState[] = [
	TraceState.parked,
	TraceState.held,
	TraceState.crashed,
	TraceState.unknown,
	TraceState.inFlight,
	TraceState.failed,
	TraceState.done,
	TraceState.closed,
];

export function overallState(entries: TraceEntry[]): TraceState | null {
	for (const state of STATE_PRECEDENCE) if (entries.some((e) => e.state === state)) return state;
	return null;
}
