import { describeValue } from '../describe';
import { ItemError } from '../errors';
import { checkLength, LIMITS, optionalInRange, TEXT_LIMITS } from '../limits';
import { storableText } from '../store/storable';
import type { ParkRequest } from './park';
import type { DeadLetterStatus } from './statuses';

const PARKED_STATUSES: Array<DeadLetterStatus | undefined> = ['new', 'held'];

/**
 * Checks a batch of park requests before anything is written, so one bad item is an error that
 * names it (and the field to fix) instead of a database error that fails the whole batch.
 */
const INT_MAX = 2_147_483_647;
/** The last moment an ISO date with a four-digit year can say (Postgres reads nothing longer). */
const LATEST_DATE = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const kind = (value: unknown): string =>
	value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

function optionalText(value: unknown, field: string, index: number): void {
	if (value === undefined || value === null || typeof value === 'string') return;
	throw new ItemError(
		`Item ${index}: ${field} must be text, got ${kind(value)}`,
		index,
		`Set ${field} to text (or leave it empty).`,
	);
}

function requiredText(value: unknown, field: string, index: number): void {
	if (typeof value === 'string' && value.trim() !== '') return;
	throw new ItemError(
		`Item ${index} has no ${field}`,
		index,
		`Set ${field}; it is part of what identifies the parked item.`,
	);
}

function optionalWhole(value: unknown, field: string, index: number, min = 0, max = INT_MAX): void {
	if (value === undefined || value === null) return;
	if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return;
	throw new ItemError(
		`Item ${index}: ${field} must be a whole number from ${min} to ${max}, got ${describeValue(value)}`,
		index,
		`Set ${field} to a whole number from ${min} to ${max}.`,
	);
}

/**
 * The texts a dead letter keeps in indexed columns (its identity, the open queue, the daily
 * rollup): one too long fails the statement, and the park of every item with it.
 */
function checkParkTexts(request: ParkRequest, index: number): void {
	const hint = 'nothing of this item was parked.';
	checkLength(request.workflowId, TEXT_LIMITS.workflowId, index, hint);
	checkLength(request.step, TEXT_LIMITS.step, index, hint);
	checkLength(request.idempotencyKey, TEXT_LIMITS.idempotencyKey, index, hint);
	checkLength(request.integration, TEXT_LIMITS.integration, index, hint);
	checkLength(request.owner, TEXT_LIMITS.owner, index, hint);
}

/** One park request, as item `index`: an ItemError naming it and the field to fix. */
export function checkParkRequest(request: ParkRequest, index: number): void {
	if (request === null || typeof request !== 'object')
		throw new ItemError(`Item ${index} is not a park request`, index);
	requiredText(request.workflowId, 'workflow ID', index);
	requiredText(request.step, 'Step', index);
	requiredText(request.errorClass, 'Error Class', index);
	for (const [field, value] of [
		['workflow name', request.workflowName],
		['execution ID', request.executionId],
		['Idempotency Key', request.idempotencyKey],
		['run link', request.runLink],
		['Integration', request.integration],
		['error message', request.errorMessage],
		['Already Happened', request.alreadyHappened],
		['Business Impact', request.impact],
		['Owner', request.owner],
		['Severity', request.severity],
	] as const)
		optionalText(value, field, index);
	optionalWhole(request.itemIndex, 'item index', index);
	optionalWhole(request.attempts, 'attempts', index);
	optionalWhole(request.errorStatus, 'HTTP status', index, 100, 999);
	// An item is parked open: new, or held while its integration is paused. Closing it is a
	// status change with who and why.
	if (request.status !== undefined && !PARKED_STATUSES.includes(request.status))
		throw new ItemError(
			`Item ${index}: an item is parked as new or held, not as ${describeValue(request.status)}`,
			index,
			'Park it as new (or held), then change its status with an actor and a reason.',
		);
	if (
		request.retryAfter !== undefined &&
		!(
			request.retryAfter instanceof Date &&
			request.retryAfter.getTime() >= 0 &&
			request.retryAfter.getTime() <= LATEST_DATE
		)
	)
		throw new ItemError(
			`Item ${index}: the retry time is not a valid date (1970 to 9999)`,
			index,
			'Give the time it may be retried as a date, or leave it out.',
		);
	optionalInRange(request.retentionDays, LIMITS.retentionDays, index);
	checkParkTexts(request, index);
}

/** Text for a column: NUL and unpaired surrogates replaced, empty stays null. */
export const storable = (value: string | undefined | null): string | null =>
	value === undefined || value === null ? null : storableText(value);
