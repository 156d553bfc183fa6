/** What Event Dedupe decides for one item, and why. */
export const ClaimOutcome = {
	new: 'new',
	duplicate: 'duplicate',
	stale: 'stale',
} as const;
export type ClaimOutcome = (typeof ClaimOutcome)[keyof typeof ClaimOutcome];

export const DuplicateReason = {
	/** Processed before (claimed and not released). */
	done: 'done',
	/** Claimed by another execution whose lease is still live. */
	inProgress: 'in_progress',
	/** The same event ID appears earlier in this input batch. */
	inBatch: 'in_batch',
	/** Another event already carried this entity's version. */
	sameVersion: 'same_version',
} as const;
export type DuplicateReason = (typeof DuplicateReason)[keyof typeof DuplicateReason];

/**
 * The states of a processed event's claim: held while its work runs, done for good, or failed
 * (its execution failed: a redelivery claims it again, or the item is parked).
 */
export const ProcessedEventStatus = {
	inProgress: 'in_progress',
	done: 'done',
	failed: 'failed',
} as const;
export type ProcessedEventStatus = (typeof ProcessedEventStatus)[keyof typeof ProcessedEventStatus];

/** When a claim counts as processed. */
export const ClaimMode = {
	/** Done as soon as it is claimed; the error workflow (Release) frees a failed execution's claims. */
	doneAtClaim: 'doneAtClaim',
	/** In progress under a lease until the Complete operation marks it done; an expired lease is claimable again. */
	leaseUntilComplete: 'leaseUntilComplete',
	/**
	 * In progress while the execution runs (its lease renewed by the process), with the item kept
	 * in the inbox; done when the execution succeeds, failed when it fails; when the process dies
	 * the lease ends and the Recover workflow re-runs the item.
	 */
	untilExecutionEnds: 'untilExecutionEnds',
} as const;
export type ClaimMode = (typeof ClaimMode)[keyof typeof ClaimMode];

export interface ClaimRequest {
	/** The item's index in the node's input, carried through so errors and outputs keep it. */
	index: number;
	eventId: string;
	/** With ordering on: the entity the event is about, and its version (exact decimal text, from toVersion). */
	entityKey?: string;
	version?: string;
	/** The item itself, kept with the claim in mode untilExecutionEnds (masked and capped by the caller). */
	payload?: unknown;
	/** The item's size when it was over the inbox cap and is not kept. */
	payloadBytes?: number;
}

export interface ClaimContext {
	consumer: string;
	workflowId?: string;
	executionId: string;
	mode: ClaimMode;
	leaseSeconds: number;
	retentionDays: number;
	/**
	 * The executions that called this one as a sub-workflow, nearest first (n8n hands a
	 * sub-workflow its parent's execution): an item of theirs holds this execution's items, so
	 * one item has one letter.
	 */
	ancestors?: string[];
}

export type ClaimResult =
	| { index: number; eventId: string; outcome: 'new' }
	| {
			index: number;
			eventId: string;
			outcome: 'duplicate';
			reason: DuplicateReason;
			claimedBy?: string | null;
	  }
	| { index: number; eventId: string; outcome: 'stale'; lastVersion: string };

/** What Complete and Release did to one event: done, released, or left because someone else owns it. */
export interface SettleResult {
	eventId: string;
	changed: boolean;
	/** The execution that holds the claim now, when it is not the caller's. */
	owner?: string | null;
	/** The claim's status now (absent when there is no claim). */
	status?: string | null;
}
