import type { ParkRequest, ParkResult } from './park';
import type { DeadLetterStatus } from './statuses';

/**
 * What an item carries about the record it was parked as (`_deadLetter`): everything an alert
 * needs to name the workflow, the item, why and its impact. One shape wherever a node parks:
 * Dead Letter Park's output and Event Dedupe's Parked outputs (Settle Failed Execution, Recover).
 */
export type ParkedSummary = {
	id: string;
	status: DeadLetterStatus;
	failureCount: number;
	/** False when an open record of the same item was updated instead. */
	created: boolean;
	runLink: string | null;
	workflowId: string;
	workflowName: string | null;
	step: string;
	class: string;
	/** Masked as the record's message is. */
	message: string | null;
	idempotencyKey: string | null;
	itemIndex: number | null;
	impact: string | null;
	alreadyHappened: string | null;
	owner: string | null;
	severity: string | null;
};

export function parkedSummary(request: ParkRequest, result: ParkResult): ParkedSummary {
	return {
		id: result.id,
		status: result.status,
		failureCount: result.failureCount,
		created: result.created,
		runLink: request.runLink ?? null,
		workflowId: request.workflowId,
		workflowName: request.workflowName ?? null,
		step: request.step,
		class: request.errorClass,
		message: result.message,
		idempotencyKey: request.idempotencyKey ?? null,
		itemIndex: request.itemIndex ?? null,
		impact: request.impact ?? null,
		alreadyHappened: request.alreadyHappened ?? null,
		owner: request.owner ?? null,
		severity: request.severity ?? null,
	};
}
