import { plainText } from '../describe';
import { maskText } from '../masking';

/**
 * One outcome alert from whatever the caller hands over: a dead-letter record (List, Get), an
 * item that carries its record's summary (`_deadLetter`: Park's output, Event Dedupe's Parked
 * outputs), a Failed item of the write node, or a heartbeat change. The
 * first line names the workflow, the item and the business impact; then why, the last three
 * attempts (when the record has them), what already happened, the run link, the record and one
 * next action with its owner. Every part is masked: a message quoting a response body or a
 * header never reaches Slack or a pager.
 */
export interface Alert {
	/** Stable per workflow and item (PagerDuty style), so a re-park updates the same alert. */
	dedupKey: string;
	action: 'trigger';
	severity: string;
	owner: string;
	text: string;
}

/** A field of the failure as text: a date as its ISO time, anything else as plain text. */
const textOf = (value: unknown): string => {
	if (value instanceof Date) return value.toISOString();
	return plainText(value);
};

/** The first of the fields that has text. */
export const first = (record: Record<string, unknown>, ...fields: string[]): string => {
	for (const field of fields) {
		const text = textOf(record[field]).trim();
		if (text) return text;
	}
	return '';
};

/**
 * A held item (its integration paused, or its breaker open) is not an alert: the pause exists to
 * keep a known outage out of the on-call channel. Whatever carries it: a write's Failed item
 * (class paused), a record (status held), or an item out of Park.
 */
export function isHeld(input: unknown): boolean {
	if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
	const json = input as Record<string, unknown>;
	const parked = json._deadLetter;
	// An item out of Park is its payload: only the record's summary says whether it is held.
	if (parked !== null && typeof parked === 'object' && !Array.isArray(parked)) {
		const summary = parked as Record<string, unknown>;
		return summary.status === 'held' || summary.class === 'paused';
	}
	return (
		json.class === 'paused' ||
		json.error_class === 'paused' ||
		json.errorClass === 'paused' ||
		json.status === 'held'
	);
}

/** One attempt as an alert line reads it: "#2 HTTP 503 transient, next in 1.2 s (message)". */
function attemptLine(entry: Record<string, unknown>): string {
	const parts = [
		`#${textOf(entry.attempt) || '?'}`,
		entry.status !== undefined && entry.status !== null ? `HTTP ${textOf(entry.status)}` : '',
		textOf(entry.class) || textOf(entry.kind),
	].filter(Boolean);
	const delay = Number(entry.delayMs);
	const next = Number.isFinite(delay) && entry.delayMs !== undefined && entry.delayMs !== null;
	const message = textOf(entry.message).slice(0, 80);
	return `${parts.join(' ')}${next ? `, next in ${(delay / 1000).toFixed(1)} s` : ''}${message ? ` (${message})` : ''}`;
}

/** The last three attempts of a record (attempt_history) or an item carrying them, oldest first. */
function lastAttempts(r: Record<string, unknown>): string {
	const history = r.attempt_history ?? r.attemptHistory;
	if (!Array.isArray(history)) return '';
	return history
		.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object')
		.slice(-3)
		.map(attemptLine)
		.join('; ');
}

/**
 * What an alert reads from its input: the item itself, with the summary of the record it was
 * parked as (`_deadLetter`, on items out of Park or Event Dedupe's Parked outputs) laid over it.
 */
export function alertRecord(input: unknown): Record<string, unknown> {
	const json =
		input !== null && typeof input === 'object' && !Array.isArray(input)
			? (input as Record<string, unknown>)
			: {};
	const parked = json._deadLetter;
	return parked !== null && typeof parked === 'object' && !Array.isArray(parked)
		? { ...json, ...(parked as Record<string, unknown>) }
		: json;
}

export function composeAlert(input: unknown, options: { maskFields?: string[] } = {}): Alert {
	const r = alertRecord(input);
	const mask = (text: string): string => maskText(text, options.maskFields);
	const workflow =
		first(r, 'workflowName', 'workflow_name', 'workflowId', 'workflow_id') || 'a workflow';
	const index = first(r, 'itemIndex', 'item_index') || '?';
	const item = first(r, 'idempotencyKey', 'idempotency_key', 'key', 'itemKey') || `item ${index}`;
	const impact = first(r, 'impact') || 'an item needs attention';
	const owner = first(r, 'owner') || 'the workflow owner';
	const message = first(r, 'message', 'error_message', 'errorMessage') || 'failed';
	const rateLimited = [r.class, r.error_class, r.errorClass].includes('rate_limited');
	const nextAction =
		first(r, 'nextAction') ||
		(rateLimited
			? `Nothing to fix: it can be replayed after ${first(r, 'retryAt', 'retry_after', 'retryAfter')}`
			: `Fix the cause (${message}), then set the record to replay_requested`);
	const attempts = lastAttempts(r);
	const text = [
		`${workflow}: ${impact} (${item})`,
		`Why: ${message}`,
		...(attempts ? [`Last attempts: ${attempts}`] : []),
		`Already happened: ${first(r, 'alreadyHappened', 'already_happened') || 'unknown'}`,
		`Run: ${first(r, 'runLink', 'run_link') || 'n/a'}`,
		`Dead letter: ${first(r, 'deadLetterId', 'id') || 'n/a'}`,
		`Next action (${owner}): ${nextAction}`,
	].join('\n');
	return {
		dedupKey: mask(`n8n-reliability:${first(r, 'workflowId', 'workflow_id')}:${item}`),
		action: 'trigger',
		severity: first(r, 'severity') || 'normal',
		owner: mask(owner),
		text: mask(text),
	};
}
