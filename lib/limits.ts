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
	listLimit: { label: 'Limit', min: 1, max: 10_000, integer: true },
	traceLimit: { label: 'Limit', min: 1, max: 1000, integer: true },
	olderThanMinutes: {
		label: 'Older Than (Minutes)',
		min: 0,
		max: 3650 * 1440,
		integer: false,
	},
	statsDays: { label: 'Days', min: 1, max: 3650, integer: true },
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
