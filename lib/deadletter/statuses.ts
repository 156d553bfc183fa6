/** The life of a parked item. Open statuses keep it in the review queue (or, held, out of it). */
export const DeadLetterStatus = {
	new: 'new',
	beingFixed: 'being_fixed',
	replayRequested: 'replay_requested',
	replayed: 'replayed',
	resolved: 'resolved',
	abandoned: 'abandoned',
	held: 'held',
	/** Closed by Compensate: the steps that had taken effect were reversed (or listed as manual). */
	compensated: 'compensated',
} as const;
export type DeadLetterStatus = (typeof DeadLetterStatus)[keyof typeof DeadLetterStatus];

export const ALL_STATUSES = Object.values(DeadLetterStatus);
export const OPEN_STATUSES: DeadLetterStatus[] = ['new', 'being_fixed', 'replay_requested', 'held'];

/**
 * The statuses a record may move to each status from. Closed records (replayed, resolved,
 * abandoned) move nowhere: a new failure of the same item opens a new record.
 */
export const ALLOWED_FROM: Record<DeadLetterStatus, DeadLetterStatus[]> = {
	new: ['held', 'being_fixed', 'replay_requested'],
	held: ['new', 'being_fixed', 'replay_requested'],
	being_fixed: ['new', 'held', 'replay_requested'],
	replay_requested: ['new', 'held', 'being_fixed'],
	replayed: ['new', 'held', 'being_fixed', 'replay_requested'],
	resolved: ['new', 'held', 'being_fixed', 'replay_requested'],
	abandoned: ['new', 'held', 'being_fixed', 'replay_requested'],
	compensated: ['new', 'held', 'being_fixed', 'replay_requested'],
};

/** Closing for good needs a reason in the audit trail, not just an actor. */
export const STATUSES_NEEDING_REASON: DeadLetterStatus[] = ['resolved', 'abandoned', 'compensated'];

/**
 * Why an item failed: the one list of classes, for dead letters, Failed outputs, alerts, the
 * console's filter and metrics labels. Each engine names the subset it can produce (the write's
 * `FailureClass`, for one).
 */
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
	/** Its execution died and Recover gave the item up. */
	crashed: 'crashed',
	/** Another execution took the write's key over: its result decides (a Failed output only). */
	superseded: 'superseded',
	/** Its execution was cancelled (Stop, the API's stop, a workflow timeout, a worker's drain). */
	stopped: 'stopped',
} as const;
export type ErrorClass = (typeof ErrorClass)[keyof typeof ErrorClass];
