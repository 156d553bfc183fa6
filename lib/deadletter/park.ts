import { keptBusinessId, LIMITS, optionalInRange } from '../limits';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';
import { ItemError } from '../errors';
import { type Compensation } from '../idempotency/compensation';
import { type AttemptEntry } from '../idempotency/types';
import { type Store } from '../store';
import { maskForStore, maskText } from '../masking';
import { checkParkRequest, storable } from './validate';
import { parkSql } from './sql';
import { type DeadLetterStatus, type ErrorClass } from './statuses';

/** What the caller knows about one failed item; the engine masks secrets and picks its identity. */
export interface ParkRequest {
	workflowId: string;
	workflowName?: string;
	executionId?: string;
	/** The step (node) the item failed at. */
	step: string;
	itemIndex?: number;
	idempotencyKey?: string;
	/** What the item is (an event ID, a record ID), when its key does not show it: Trace finds it by this. */
	businessId?: string;
	runLink?: string;
	integration?: string;
	errorClass: ErrorClass | string;
	errorMessage?: string;
	errorStatus?: number;
	attempts?: number;
	alreadyHappened?: string;
	impact?: string;
	owner?: string;
	severity?: string;
	/** `held` while the integration is paused or its breaker open; `new` otherwise. */
	status?: DeadLetterStatus;
	/** What holds a held item: the integration's pause, or its open breaker. */
	holdReason?: 'pause' | 'breaker';
	payload: unknown;
	retryAfter?: Date;
	retentionDays?: number;
	/** The workflow's version: a version ID, or a fingerprint (see workflowFingerprint). */
	sourceVersion?: string;
	/** The attempts the write made for the item, oldest first (masked again when stored). */
	attemptHistory?: AttemptEntry[];
	/** The steps of the same item that had taken effect, oldest first. */
	steps?: ItemStep[];
	/**
	 * No workflow runs after this park to alert it (a stopped execution's items): its alert is
	 * due, and the bundled Recover workflow sends it (takeDueAlerts).
	 */
	alertLater?: boolean;
}

/** A write step that took effect before the item was parked, and how to reverse it. */
export interface ItemStep {
	scope: string;
	key: string;
	/** The node that wrote it. */
	step: string | null;
	completedAt: string | null;
	responseStatus: number | null;
	/** The saved response body (masked, as saved), as text. */
	response: string | null;
	compensation: Compensation | null;
}

export interface ParkOptions {
	/** Field names to mask besides the default secret names (see lib/masking). */
	maskFields?: string[];
}

export interface ParkResult {
	id: string;
	status: DeadLetterStatus;
	failureCount: number;
	/** False when an open record of the same item was updated instead. */
	created: boolean;
	/** The payload as stored: masked, and {} for none. */
	payload: unknown;
	/** The error message as stored (masked), or null. */
	message: string | null;
	refused?: undefined;
}

/**
 * An item that was not parked, and nothing of it stored: a field is missing, of the wrong type
 * or too long for its column. The error names the item (its position in the batch) and the
 * field to fix.
 */
interface ParkRefusal {
	refused: ItemError;
}

export type ParkOutcome = ParkResult | ParkRefusal;

/** The records parked, in order; the first refused item, if any, is thrown instead. */
export function parkedOrThrow(outcomes: ParkOutcome[]): ParkResult[] {
	const refusal = outcomes.find((o): o is ParkRefusal => o.refused !== undefined);
	if (refusal) throw refusal.refused;
	return outcomes as ParkResult[];
}

const itemKeyOf = (idempotencyKey: string | null, maskedPayload: unknown): string =>
	idempotencyKey
		? `key:${idempotencyKey}`
		: `payload:${createHash('sha256').update(canonicalJson(maskedPayload)).digest('hex')}`;

/**
 * Whether JSON has no value for `value` other than null (null, undefined, NaN, an object whose
 * toJSON gives null): such a payload is stored as {}. Plain objects answer without serialising.
 */
function jsonIsNull(value: unknown): boolean {
	if (value === null || value === undefined) return true;
	if (typeof value === 'number') return !Number.isFinite(value);
	if (typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
		return JSON.stringify(value) === 'null';
	return false;
}

/** A dead-letter ID: the bigint the store assigned, as decimal text. */
export const isDeadLetterId = (id: unknown): boolean =>
	typeof id === 'string' && /^\d{1,18}$/.test(id);

/**
 * Parks a batch of items in one statement; the outcomes come back in input order. The same item
 * twice in one batch is one record (its later failure wins). Each item is checked first: one
 * that cannot be stored (a field missing, of the wrong type or too long for its column) is
 * refused on its own, with an error naming its position and the field, and the others are
 * parked; nothing that could fail the statement for the whole batch reaches it.
 */
export async function parkItems(
	store: Store,
	requests: ParkRequest[],
	options: ParkOptions = {},
): Promise<ParkOutcome[]> {
	const refusals = new Map<number, ItemError>();
	const valid: Array<{ request: ParkRequest; at: number }> = [];
	requests.forEach((request, at) => {
		try {
			checkParkRequest(request, at);
			valid.push({ request, at });
		} catch (error) {
			if (!(error instanceof ItemError)) throw error;
			refusals.set(at, error);
		}
	});
	const parked = await parkValid(
		store,
		valid.map((v) => v.request),
		options,
	);
	const byPosition = new Map(valid.map((v, i) => [v.at, parked[i]]));
	return requests.map((_request, at) => byPosition.get(at) ?? { refused: refusals.get(at)! });
}

/** Parks requests that passed checkParkRequest, in one statement. */
async function parkValid(
	store: Store,
	requests: ParkRequest[],
	options: ParkOptions,
): Promise<ParkResult[]> {
	if (requests.length === 0) return [];
	// A batch's items mostly share their texts (one error message, one impact): each distinct
	// text is masked once.
	const maskedTexts = new Map<string, string>();
	const text = (value: string | undefined): string | null => {
		if (value === undefined || value === null) return null;
		let masked = maskedTexts.get(value);
		if (masked === undefined) {
			masked = maskText(value, options.maskFields);
			maskedTexts.set(value, masked);
		}
		return masked;
	};
	// What the statement reads of each item. A field that reads the same when absent is left
	// undefined, which JSON.stringify omits and json_to_recordset reads as NULL: a null, an alert
	// not due, an empty list of steps or attempts (the statement coalesces those to []). The
	// batch's JSON is a quarter smaller and Postgres parses it in half the time; the row keeps
	// one shape, so building and serialising it costs no more than a full one.
	const kept = (value: string | undefined | null): string | undefined =>
		storable(value) ?? undefined;
	const maskedList = (list: unknown[] | undefined): unknown[] | undefined =>
		list === undefined || list === null || list.length === 0
			? undefined
			: maskForStore(list, options.maskFields).stored;
	const shown: unknown[] = [];
	const rows = requests.map((request, ord) => {
		// Secrets never land in the store: the payload and every text that came from outside.
		// Masked text is storable too; the other text columns are made storable (no NUL).
		// A payload of null (or none, or one JSON has no value for, such as NaN) is stored as {}:
		// the column holds JSON, and SQL NULL is not.
		// The masked payload names the item (its key) and goes on to the next node as it is; the
		// row carries its storable form, which differs only where the walk left a part unwalked.
		const masked = maskForStore(request.payload ?? {}, options.maskFields);
		const payload = jsonIsNull(masked.value) ? {} : masked.value;
		shown[ord] = payload;
		const idempotencyKey = storable(request.idempotencyKey);
		return {
			ord,
			workflow_id: kept(request.workflowId),
			workflow_name: kept(request.workflowName),
			execution_id: kept(request.executionId),
			step: kept(request.step),
			item_index: request.itemIndex ?? undefined,
			item_key: itemKeyOf(idempotencyKey, payload),
			idempotency_key: idempotencyKey ?? undefined,
			business_id: keptBusinessId(kept(request.businessId)) ?? undefined,
			run_link: kept(request.runLink),
			integration: kept(request.integration),
			error_class: kept(request.errorClass),
			error_message: text(request.errorMessage) ?? undefined,
			error_status: request.errorStatus ?? undefined,
			attempts: request.attempts ?? 1,
			already_happened: text(request.alreadyHappened) ?? undefined,
			impact: text(request.impact) ?? undefined,
			owner: kept(request.owner),
			severity: kept(request.severity),
			status: request.status ?? 'new',
			// Only a breaker's hold is read from the request (a pause's is decided by the statement).
			hold_reason: request.holdReason === 'breaker' ? 'breaker' : undefined,
			payload: jsonIsNull(masked.value) ? {} : masked.stored,
			retry_after: request.retryAfter?.toISOString(),
			// As validated: a number given as text ("30", "3e1") or left empty ("") is read the same way.
			retention_days: optionalInRange(request.retentionDays, LIMITS.retentionDays) ?? 90,
			source_version: kept(request.sourceVersion),
			steps: maskedList(request.steps),
			attempt_history: maskedList(request.attemptHistory),
			alert_due: request.alertLater === true ? true : undefined,
		};
	});
	// Storable text holds no NUL, so NUL separates the parts of an identity unambiguously. An
	// item's own letter is one per item, at any step (OPEN_IDENTITY_STEP).
	const identity = (row: (typeof rows)[number]): string =>
		`${row.workflow_id}\u0000${row.item_key.startsWith('key:event:') ? '' : row.step}\u0000${row.item_key}`;
	const last = new Map<string, (typeof rows)[number]>();
	for (const row of rows) last.set(identity(row), row);
	const unique = [...last.values()];
	const result = await store.query<{
		id: string;
		status: DeadLetterStatus;
		failure_count: number;
		inserted: boolean;
		ord: number;
	}>(parkSql(store, { rows: unique }));
	// Each row's record is the one parked for the last row of its identity (by position).
	const byOrd = new Map(result.map((r) => [r.ord, r]));
	return rows.map((row) => {
		const r = byOrd.get(last.get(identity(row))!.ord)!;
		return {
			id: String(r.id),
			status: r.status,
			failureCount: r.failure_count,
			created: r.inserted,
			payload: shown[row.ord],
			message: row.error_message ?? null,
		};
	});
}
