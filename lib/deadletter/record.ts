import type { DeadLetterStatus } from './statuses';

/**
 * A dead-letter record as the nodes output it (Get, List, Take for Replay): one camelCase shape,
 * mapped from the store's row here and nowhere else. The fields a row does not carry are absent
 * (List leaves out the payload, the attempts and the history); the store's own bookkeeping (the
 * item's identity hash, the open flag, the status before a park) is not part of it.
 */
export type DeadLetter = {
	id: string;
	status: DeadLetterStatus;
	workflowId: string;
	workflowName: string | null;
	executionId: string | null;
	/** The step (node) the item failed at. */
	step: string;
	itemIndex: number | null;
	idempotencyKey: string | null;
	runLink: string | null;
	integration: string | null;
	errorClass: string;
	errorMessage: string | null;
	errorStatus: number | null;
	attempts: number;
	failureCount: number;
	alreadyHappened: string | null;
	impact: string | null;
	owner: string | null;
	severity: string;
	/** When a rate-limited item may be replayed. */
	retryAfter: Date | null;
	firstFailedAt: Date;
	lastFailedAt: Date;
	parkedAt: Date;
	closedAt: Date | null;
	/** What holds a held item: its integration's pause or its open breaker. */
	holdReason?: string | null;
	/** The item as it was parked (masked). */
	payload?: unknown;
	/** The write's attempts, oldest first. */
	attemptHistory?: unknown;
	/** The item's write steps that had taken effect before it was parked. */
	steps?: unknown;
	/** The workflow's version at the latest failure. */
	sourceVersion?: string | null;
	/** The record's generation: what Update Status's *Expected Generation* fences on. */
	generation?: string;
	takenBy?: string | null;
	updatedAt?: Date;
	expiresAt?: Date;
	/** The audit trail (who, when, from, to, why), oldest first. */
	history?: unknown;
};

/** Row columns in the record's camelCase; columns not named here are not output. */
const fields = {
	id: 'id',
	status: 'status',
	workflow_id: 'workflowId',
	workflow_name: 'workflowName',
	execution_id: 'executionId',
	step: 'step',
	item_index: 'itemIndex',
	idempotency_key: 'idempotencyKey',
	run_link: 'runLink',
	integration: 'integration',
	error_class: 'errorClass',
	error_message: 'errorMessage',
	error_status: 'errorStatus',
	attempts: 'attempts',
	failure_count: 'failureCount',
	already_happened: 'alreadyHappened',
	impact: 'impact',
	owner: 'owner',
	severity: 'severity',
	retry_after: 'retryAfter',
	first_failed_at: 'firstFailedAt',
	last_failed_at: 'lastFailedAt',
	parked_at: 'parkedAt',
	closed_at: 'closedAt',
	hold_reason: 'holdReason',
	payload: 'payload',
	attempt_history: 'attemptHistory',
	steps: 'steps',
	source_version: 'sourceVersion',
	generation: 'generation',
	taken_by: 'takenBy',
	updated_at: 'updatedAt',
	expires_at: 'expiresAt',
	history: 'history',
} as const satisfies Record<string, keyof DeadLetter>;

/** The record of a row (as read, listed or taken); bigint ids and generations as text. */
export function toDeadLetter(row: Record<string, unknown>): DeadLetter {
	const record: Record<string, unknown> = {};
	for (const [column, field] of Object.entries(fields)) {
		if (column in row) record[field] = row[column];
	}
	record.id = String(row.id);
	if (row.generation !== undefined && row.generation !== null)
		record.generation = String(row.generation);
	return record as DeadLetter;
}
