/** The life of a parked item. Open statuses keep it in the review queue (or, held, out of it). */
export const DeadLetterStatus = {
	new: 'new',
	beingFixed: 'being_fixed',
	replayRequested: 'replay_requested',
	replayed: 'replayed',
	resolved: 'resolved',
	abandoned: 'abandoned',
	held: 'held',
} as const;
export type DeadLetterStatus = (typeof DeadLetterStatus)[keyof typeof DeadLetterStatus];

export const ALL_STATUSES = Object.values(DeadLetterStatus);
export const OPEN_STATUSES: DeadLetterStatus[] = ['new', 'being_fixed', 'replay_requested', 'held'];

/** Closing for good needs a reason in the audit trail, not just an actor. */
export const STATUSES_NEEDING_REASON: DeadLetterStatus[] = ['resolved', 'abandoned'];

/** Why an item was parked. */
export const ErrorClass = {
	permanent: 'permanent',
	transient: 'transient',
	exhausted: 'exhausted',
	rateLimited: 'rate_limited',
	conflict: 'conflict',
	unknownOutcome: 'unknown_outcome',
	invalid: 'invalid',
	paused: 'paused',
	execution: 'execution',
} as const;
export type ErrorClass = (typeof ErrorClass)[keyof typeof ErrorClass];
