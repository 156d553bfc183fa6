import { describeValue } from './describe';
import { ConfigurationError, ItemError } from './errors';

/**
 * The allowed range of every numeric parameter of the nodes, in one place: the node descriptions take their minValue/maxValue from here and the engine checks
 * the same ranges, so a value n8n's editor would refuse is refused with the same words when it
 * arrives through an expression or an older workflow, before anything is written.
 */
export interface Range {
	/** The parameter as the node shows it, e.g. "Retention (Days)". */
	label: string;
	min: number;
	max: number;
	/** Whole numbers only. */
	integer: boolean;
}

const DAY_SECONDS = 86_400;

export const LIMITS = {
	retentionDays: { label: 'Retention (Days)', min: 1, max: 3650, integer: true },
	historyRetentionDays: { label: 'History Retention (Days)', min: 1, max: 3650, integer: true },
	statsRetentionDays: { label: 'Stats Retention (Days)', min: 1, max: 3650, integer: true },
	purgeSliceSize: { label: 'Slice Size', min: 1, max: 100_000, integer: true },
	purgeRestPercent: { label: 'Rest Between Slices (%)', min: 0, max: 1000, integer: true },
	listLimit: { label: 'Limit', min: 1, max: 10_000, integer: true },
	alertUpdateMinutes: { label: 'Update Interval (Minutes)', min: 1, max: 1440, integer: true },
	alertCeilingPerHour: {
		label: 'Alert Ceiling per Owner per Hour',
		min: 1,
		max: 10_000,
		integer: true,
	},
	traceLimit: { label: 'Limit', min: 1, max: 1000, integer: true },
	olderThanMinutes: {
		label: 'Older Than (Minutes)',
		min: 0,
		max: 3650 * 1440,
		integer: false,
	},
	statsDays: { label: 'Days', min: 1, max: 3650, integer: true },
	drillWaitSeconds: { label: 'Wait Per Test (Seconds)', min: 5, max: 600, integer: false },
	chartDays: { label: 'Chart Days', min: 1, max: 366, integer: true },
	heartbeatPeriodMinutes: {
		label: 'Period (Minutes)',
		min: 0.02,
		max: 366 * 1440,
		integer: false,
	},
	heartbeatGraceMinutes: { label: 'Grace (Minutes)', min: 0, max: 366 * 1440, integer: false },
	heartbeatPeriodSeconds: {
		label: 'Period (seconds)',
		min: 1,
		max: 366 * DAY_SECONDS,
		integer: false,
	},
	heartbeatGraceSeconds: {
		label: 'Grace (seconds)',
		min: 0,
		max: 366 * DAY_SECONDS,
		integer: false,
	},
	// Idempotent HTTP Write.
	timeoutMs: { label: 'Timeout (Ms)', min: 1, max: 3_600_000, integer: true },
	maxSavedBodyKb: { label: 'Saved Body Limit (KB)', min: 0, max: 10_240, integer: true },
	baseDelaySeconds: { label: 'Base Delay (Seconds)', min: 0, max: 3600, integer: false },
	maxDelaySeconds: { label: 'Max Delay (Seconds)', min: 0, max: DAY_SECONDS, integer: false },
	deadlineSeconds: { label: 'Deadline (Seconds)', min: 1, max: DAY_SECONDS, integer: false },
	maxAttempts: { label: 'Max Attempts', min: 1, max: 100, integer: true },
	concurrency: { label: 'Concurrency', min: 1, max: 1000, integer: true },
	breakerThreshold: { label: 'Circuit Breaker Threshold', min: 0, max: 10_000, integer: true },
	breakerCoolDownSeconds: {
		label: 'Circuit Breaker Cool-Down (Seconds)',
		min: 1,
		max: DAY_SECONDS,
		integer: true,
	},
	// Event Dedupe.
	claimLeaseSeconds: { label: 'Lease (Seconds)', min: 1, max: 7 * DAY_SECONDS, integer: true },
	recoverAfterSeconds: {
		label: 'Recover After (Seconds)',
		min: 10,
		max: DAY_SECONDS,
		integer: true,
	},
	inboxMaxItemKb: { label: 'Largest Item (KB)', min: 1, max: 10_240, integer: true },
	maxRecoveries: { label: 'Max Recoveries', min: 0, max: 100, integer: true },
	// Dead Letter Park, Take for Replay.
	retakeAfterMinutes: { label: 'Retake After (Minutes)', min: 1, max: 10_080, integer: true },
	commitHorizonSeconds: {
		label: 'Target Commit Horizon (Seconds)',
		min: 0,
		max: 600,
		integer: false,
	},
} as const satisfies Record<string, Range>;

const describeRange = (range: Range): string =>
	`${range.integer ? 'a whole number ' : ''}from ${range.min} to ${range.max}`;

/**
 * `value` as a number within `range`; a number given as text ("30") is accepted. Anything else
 * is an error naming the parameter, the allowed range and (with an item index) the item.
 */
export function inRange(value: unknown, range: Range, itemIndex?: number): number {
	const n =
		typeof value === 'number'
			? value
			: typeof value === 'string' && value.trim() !== ''
				? Number(value)
				: Number.NaN;
	if (
		Number.isFinite(n) &&
		n >= range.min &&
		n <= range.max &&
		(!range.integer || Number.isInteger(n))
	)
		return n;
	const where = itemIndex === undefined ? '' : `Item ${itemIndex}: `;
	const message = `${where}${range.label} must be ${describeRange(range)}, got ${describeValue(value)}`;
	const hint = `Set ${range.label} to ${describeRange(range)}.`;
	if (itemIndex === undefined) throw new ConfigurationError(message, hint);
	throw new ItemError(message, itemIndex, hint);
}

/** `inRange` for an optional value: undefined, null and '' stay undefined. */
export function optionalInRange(
	value: unknown,
	range: Range,
	itemIndex?: number,
): number | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	return inRange(value, range, itemIndex);
}

/**
 * The longest text each identifier may be, in UTF-16 code units (`string.length`). These values
 * are stored in indexed columns, and a btree index row holds at most 2,704 bytes: one longer text
 * would fail the whole statement, and with it every item of the batch. A code unit takes at most
 * three bytes in UTF-8, so the limits are chosen such that the widest index (the dead-letter
 * daily rollup: workflow, step, owner and a 200-character reason) fits whatever the text is.
 * Identifiers that come from the sender rather than the workflow's author (event IDs, entity
 * keys, write keys) are not refused when longer: they are stored as a hash of themselves.
 */
export interface TextLimit {
	/** The field as the node shows it, e.g. "Item Reference". */
	label: string;
	max: number;
}

export const TEXT_LIMITS = {
	workflowId: { label: 'workflow ID', max: 128 },
	executionId: { label: 'execution ID', max: 255 },
	step: { label: 'Step', max: 200 },
	owner: { label: 'Owner', max: 128 },
	integration: { label: 'Integration', max: 128 },
	/** A write's key as stored and sent; longer keys are sent and stored as their hash. */
	idempotencyKey: { label: 'Idempotency Key', max: 255 },
	itemReference: { label: 'Item Reference', max: 255 },
	/** What a record is about, beside its key (Trace's lookup); a longer one is not kept. */
	businessId: { label: 'business ID', max: 255 },
	scope: { label: 'Scope', max: 255 },
	consumer: { label: 'Consumer', max: 255 },
	/** Longer event IDs (and entity keys) are stored as their hash. */
	eventId: { label: 'Event ID', max: 255 },
	/** An entity version is exact decimal text; Postgres numeric holds at most this many digits. */
	entityVersion: { label: 'Entity Version', max: 1000 },
	pauseName: { label: 'name', max: 255 },
	heartbeatName: { label: 'Heartbeat name', max: 200 },
	destination: { label: 'Destination', max: 128 },
	orderingKey: { label: 'Ordering Key', max: 255 },
} as const satisfies Record<string, TextLimit>;

/**
 * What is wrong with `value` as a text under `limit`, or undefined when it fits (or is not text:
 * type checks are the caller's). Says how long it is and how long it may be.
 */
export function lengthProblem(value: unknown, limit: TextLimit): string | undefined {
	if (typeof value !== 'string' || value.length <= limit.max) return undefined;
	return `${limit.label} is ${value.length.toLocaleString('en-US')} characters long, more than the ${limit.max.toLocaleString('en-US')} it may have`;
}

/**
 * Refuses a text longer than its limit before anything is written: an ItemError naming the item
 * (with an index) or a ConfigurationError for a setting of the whole run. `hint` says what to
 * do besides shortening it, e.g. "nothing was sent".
 */
export function checkLength(
	value: unknown,
	limit: TextLimit,
	itemIndex?: number,
	hint?: string,
): void {
	const problem = lengthProblem(value, limit);
	if (problem === undefined) return;
	const fix = `Shorten ${limit.label} to at most ${limit.max} characters${hint ? `; ${hint}` : '.'}`;
	if (itemIndex === undefined) throw new ConfigurationError(problem, fix);
	throw new ItemError(`Item ${itemIndex}: ${problem}`, itemIndex, fix);
}

/**
 * A business ID as a record keeps it beside its key, for Trace: in an indexed column, so one
 * over the limit (or empty) is not kept rather than fail the statement for the whole batch.
 */
export function keptBusinessId(value: string | undefined | null): string | null {
	const text = typeof value === 'string' ? value.trim() : '';
	return text && text.length <= TEXT_LIMITS.businessId.max ? text : null;
}
