import { ConfigurationError } from '../errors';
import type { AttemptEntry } from '../idempotency/types';
import { inRange, LIMITS } from '../limits';
import { maskValue } from '../masking';
import type { Store } from '../store';
import { storableText } from '../store/storable';
import {
	claimsSql,
	deadLettersSql,
	deadLetterHistorySql,
	type TraceMatch,
	writeKeysSql,
} from './sql';

/**
 * "Where is item X?": every record the store holds about one business ID (an event ID, an
 * idempotency key, or a part of one such as `INV-20931`) as one timeline, oldest first: each
 * claim of the event, each write step's key record and each dead letter, with where it stands
 * and a link to the n8n execution that holds or held it.
 */
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
	/** A dead letter replayed, resolved or abandoned. */
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

interface DeadLetterHistoryEntry {
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

/** Below this a part matches too much to be an answer, and trigrams cannot serve it. */
const TRACE_MIN_PART = 3;
const MAX_QUERY_CHARS = 500;

/** The n8n execution page, as the nodes link it in their run links. */
function executionLink(
	baseUrl: string | undefined,
	workflowId: string | null,
	executionId: string | null,
): string | null {
	if (!baseUrl || !workflowId || !executionId) return null;
	return `${baseUrl.replace(/\/+$/, '')}/workflow/${encodeURIComponent(workflowId)}/executions/${encodeURIComponent(executionId)}`;
}

/** `%part%` for ILIKE, with the part's own wildcards taken literally. */
const containsPattern = (part: string): string => `%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const iso = (value: unknown): string | null =>
	value === null || value === undefined ? null : new Date(value as string).toISOString();
const text = (value: unknown): string | null =>
	value === null || value === undefined ? null : String(value);

type Row = Record<string, unknown>;

function claimEntry(row: Row, baseUrl: string | undefined): Omit<ClaimEntry, 'matched'> {
	const workflowId = text(row.workflow_id);
	const status = String(row.status);
	const state: TraceState =
		status === 'done'
			? TraceState.done
			: status === 'failed'
				? TraceState.failed
				: row.lease_lapsed
					? TraceState.crashed
					: TraceState.inFlight;
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

function writeEntry(row: Row, baseUrl: string | undefined): Omit<WriteEntry, 'matched'> {
	const workflowId = text(row.workflow_id);
	const status = String(row.status);
	const state: TraceState =
		status === 'succeeded'
			? TraceState.done
			: status === 'failed'
				? TraceState.failed
				: status === 'unknown'
					? TraceState.unknown
					: row.lease_lapsed
						? TraceState.crashed
						: TraceState.inFlight;
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

function deadLetterEntry(
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

function overallState(entries: TraceEntry[]): TraceState | null {
	for (const state of STATE_PRECEDENCE) if (entries.some((e) => e.state === state)) return state;
	return null;
}

/**
 * One table's rows: those with the whole ID; when it has none, those containing it. Per table,
 * because an event ID's write keys and dead letters usually carry it inside a longer key
 * (`INV-20931:post`, `event:invoices:INV-20931`).
 */
async function rowsOf(
	store: Store,
	sql: (store: Store, match: TraceMatch) => string,
	query: string,
	limit: number,
): Promise<{ rows: Row[]; match: TraceMatch }> {
	// One more than the limit says whether anything was left out.
	const exact = await store.query<Row>(sql(store, 'exact'), [query, limit + 1]);
	if (exact.length > 0 || query.length < TRACE_MIN_PART) return { rows: exact, match: 'exact' };
	const part = await store.query<Row>(sql(store, 'part'), [containsPattern(query), limit + 1]);
	return { rows: part, match: 'part' };
}

async function find(
	store: Store,
	query: string,
	limit: number,
	baseUrl: string | undefined,
): Promise<{ entries: TraceEntry[]; truncated: boolean; exact: boolean }> {
	const [claims, keys, letters] = await Promise.all([
		rowsOf(store, claimsSql, query, limit),
		rowsOf(store, writeKeysSql, query, limit),
		rowsOf(store, deadLettersSql, query, limit),
	]);
	const events =
		letters.rows.length === 0
			? []
			: await store.query<Row>(deadLetterHistorySql(store), [letters.rows.map((l) => l.id)]);
	const historyOf = (id: unknown): DeadLetterHistoryEntry[] =>
		events
			.filter((e) => String(e.dead_letter_id) === String(id))
			.map((e) => ({
				at: iso(e.at)!,
				actor: String(e.actor),
				fromStatus: text(e.from_status),
				toStatus: String(e.to_status),
				reason: text(e.reason),
			}));
	const all: TraceEntry[] = [
		...claims.rows.map((row) => ({ ...claimEntry(row, baseUrl), matched: claims.match })),
		...keys.rows.map((row) => ({ ...writeEntry(row, baseUrl), matched: keys.match })),
		...letters.rows.map((row) => ({
			...deadLetterEntry(row, historyOf(row.id), baseUrl),
			matched: letters.match,
		})),
	];
	// The newest `limit` entries, then oldest first: the timeline reads as the item lived.
	const newest = all.sort((a, b) => b.at.localeCompare(a.at)).slice(0, limit);
	return {
		entries: newest.reverse(),
		truncated: all.length > limit,
		exact: newest.some((e) => e.matched === 'exact'),
	};
}

/**
 * Traces one business ID: in each table, the records whose event ID, write key or dead letter's
 * idempotency key is the ID exactly; where none is, those that contain it (case-insensitive, at
 * least TRACE_MIN_PART characters). Values are masked again on the way out, for records stored by
 * older versions.
 */
export async function traceItem(
	store: Store,
	businessId: string,
	options: TraceOptions = {},
): Promise<TraceResult> {
	const query = storableText(typeof businessId === 'string' ? businessId : '').trim();
	if (!query)
		throw new ConfigurationError(
			'Trace needs a business ID',
			'Set Business ID to an event ID, an idempotency key or a part of one, e.g. INV-20931.',
		);
	if (query.length > MAX_QUERY_CHARS)
		throw new ConfigurationError(
			`The business ID is ${query.length} characters long; at most ${MAX_QUERY_CHARS} are searched`,
			'Search by the event ID or key itself, or a part of it.',
		);
	const limit = options.limit === undefined ? 200 : inRange(options.limit, LIMITS.traceLimit);
	const found = await find(store, query, limit, options.baseUrl);
	const match = found.entries.length === 0 ? 'none' : found.exact ? 'exact' : 'part';
	const entries = maskValue(found.entries, options.maskFields);
	return {
		query,
		match,
		state: overallState(entries),
		entries,
		truncated: found.truncated,
		limit,
	};
}
