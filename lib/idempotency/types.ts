import { ErrorClass } from '../deadletter/statuses';
import type { Compensation } from './compensation';
import type { RetryPolicy } from './policy';

/** The values and shapes of one Idempotent HTTP Write run, shared by its modules. */

/**
 * The states of a key record. `unknown`: the effect may exist; only reconciliation moves it on.
 * `compensated`: the effect was reversed by Compensate; terminal, a later run with the key is
 * refused rather than answered from the saved response.
 */
export const KeyStatus = {
	inProgress: 'in_progress',
	succeeded: 'succeeded',
	failed: 'failed',
	unknown: 'unknown',
	compensated: 'compensated',
} as const;
export type KeyStatus = (typeof KeyStatus)[keyof typeof KeyStatus];

/** What to do when the effect of a request may or may not exist. */
export const UnknownOutcomeStrategy = {
	/** Send again with the same key: the target returns the first result. */
	retry: 'retry',
	/** Ask the target (a GET) whether the effect exists; send only when it does not. */
	lookup: 'lookup',
	/** Never send again: park the item for a person. */
	park: 'park',
} as const;
export type UnknownOutcomeStrategy =
	(typeof UnknownOutcomeStrategy)[keyof typeof UnknownOutcomeStrategy];

/** Why an item ended on the Failed output (and in the dead-letter store): the write's classes. */
export const FailureClass = {
	permanent: ErrorClass.permanent,
	exhausted: ErrorClass.exhausted,
	rateLimited: ErrorClass.rateLimited,
	conflict: ErrorClass.conflict,
	unknownOutcome: ErrorClass.unknownOutcome,
	paused: ErrorClass.paused,
	/** The item could not become a request (bad input): nothing was claimed or sent. */
	invalid: ErrorClass.invalid,
	/** Another execution took the key over while this one wrote; the new owner's result decides. */
	superseded: ErrorClass.superseded,
	/** The execution was cancelled: nothing more is sent for the item. */
	stopped: ErrorClass.stopped,
} as const;
export type FailureClass = (typeof FailureClass)[keyof typeof FailureClass];

export interface WriteRequest {
	index: number;
	scope: string;
	key: string;
	fingerprint: string;
	/** Payload parked with a failure (the input item). */
	payload: unknown;
	/** How long one attempt may take (the request's timeout); the lease covers it. */
	timeoutMs?: number;
	/** The item could not become a request (what to fix): it ends alone, parked, nothing claimed. */
	invalid?: string;
	/** The version the write expects the target to hold (its precondition), for a conflict's record. */
	precondition?: { header: string; value: string };
	/**
	 * The business item this write is a step of: the writes of one item share it, so a later
	 * step that parks the item finds the steps that took effect. Default: execution and index.
	 */
	itemRef?: string;
	/**
	 * The business ID the write is about (the Item Reference, or the business identity's record
	 * ID), kept with its record and its dead letter: a key built by business identity is a hash,
	 * and Trace finds the item by this.
	 */
	businessId?: string;
	/** How to reverse this step, kept with its record. */
	compensation?: Compensation;
}

export interface HttpAnswer {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
	/** A saved body that was over the limit: `body` is its first part, as text. */
	truncated?: boolean;
}

export type SendResult =
	| { kind: 'response'; answer: HttpAnswer }
	| { kind: 'not_sent' | 'lost'; code: string; message: string };

export type LookupResult =
	| { kind: 'exists'; answer: HttpAnswer }
	| { kind: 'absent' }
	| { kind: 'conflict'; message: string };

export interface WriteContext {
	/**
	 * Records of an earlier default scope to move to the run's scope before it claims (see
	 * scopes.ts): the node's scope once followed its name and now follows its ID.
	 */
	adoptScope?: { from: string; to: string };
	workflowId?: string;
	workflowName?: string;
	executionId: string;
	node: string;
	runLink?: string;
	integration?: string;
	retentionDays: number;
	policy: RetryPolicy;
	onUnknown: UnknownOutcomeStrategy;
	concurrency: number;
	/** Largest response body saved for replays, in characters. */
	maxSavedBodyChars: number;
	/** Park failures in the dead-letter store (false: route only). */
	park: boolean;
	/**
	 * Route only, and the execution is stopped (its cancel signal fired): no output of the node
	 * runs, so the failed items would be in no output. True parks them; false leaves them to a
	 * caller that retries them itself (the Outbox relay, whose messages stay in the outbox).
	 */
	parkIfStopped?: boolean;
	owner?: string;
	impact?: string;
	alreadyHappened?: string;
	/** The workflow's version (ID or fingerprint), kept on what is parked. */
	sourceVersion?: string;
	breaker?: { threshold: number; coolDownSeconds: number };
	/** Field names masked in everything stored or output, besides the usual secret names. */
	maskFields?: string[];
	/**
	 * How much longer than one attempt's timeout a lease lasts (default 20 s). The lease is
	 * renewed while the run lives, so a dead owner is detected within timeout + margin.
	 */
	leaseMarginMs?: number;
	/**
	 * The target's commit horizon: how long after an attempt's timeout its request is assumed to
	 * have landed or never to land (default 2 s; the node's Target Commit Horizon). A lookup or a
	 * takeover waits this out before it reads the target; a later commit can be a second effect.
	 */
	inFlightGraceMs?: number;
}

/**
 * Where an attempt may reach the wire: `notAfter` is the end of the lease that covers it (ms since
 * the epoch, on the run's clock). A takeover waits only for the requests its lease covered, so a
 * transport that stalled past it (a frozen process, a slow credential read) must not send, and a
 * request still in flight then is abandoned (its effect may exist).
 */
export interface WireWindow {
	notAfter: number;
}

export interface WriteDeps {
	send(request: WriteRequest, attempt: number, wire: WireWindow): Promise<SendResult>;
	lookup?(request: WriteRequest): Promise<LookupResult>;
	sleep?(ms: number): Promise<void>;
	now?(): number;
	random?(): number;
	/**
	 * The execution's cancel signal (n8n's Stop, the API's stop, a workflow timeout, a worker's
	 * drain): once it fires no attempt starts, a backoff ends at once, and each item ends failed
	 * as stopped (or unknown, when an earlier attempt's response was lost).
	 */
	signal?: AbortSignal;
	/**
	 * What the run has to tell whoever watches it, beside the outcomes: an integration in a fire
	 * drill. The node shows it as a warning in its output.
	 */
	notice?(message: string): void;
}

export interface Failure {
	class: FailureClass;
	status?: number;
	message: string;
	retryAt?: Date;
	deadLetterId?: string;
}

/** What every item's outcome says, whether it succeeded or failed. */
interface OutcomeBase {
	index: number;
	key: string;
	replayed: boolean;
	attempts: number;
	durationMs: number;
	/** This execution was superseded by another owner of the key while it wrote. */
	superseded?: boolean;
	/** Held, not failed: the integration is paused or its breaker open; parked as held for it. */
	hold?: 'pause' | 'breaker';
	/**
	 * Gave up waiting for another owner of the key: that owner may still succeed, after its
	 * settle has closed the key's letters and before this item's park. The park is followed by
	 * the close of the key's letters if its record says succeeded.
	 */
	waitedOn?: boolean;
	/** What this item's attempts saw, oldest first: parked with a failure. */
	history?: AttemptEntry[];
}

/** The target's answer to the write, or the saved one a later delivery of its key returns. */
export interface WriteSuccess extends OutcomeBase {
	ok: true;
	answer: HttpAnswer;
	failure?: undefined;
}

/** Why the item did not take effect (or may have, for an unknown outcome). */
export interface WriteFailure extends OutcomeBase {
	ok: false;
	failure: Failure;
	answer?: undefined;
}

/** One item's outcome: `ok` says which of the two it is. */
export type WriteOutcome = WriteSuccess | WriteFailure;

/** One line of a key's attempt history, kept with the record and parked with a failure. */
export interface AttemptEntry {
	at: string;
	attempt: number;
	/** response, lost, not_sent, lookup, or observed (a superseded owner's result). */
	kind: string;
	status?: number;
	/** The outcome's class: success, transient, permanent, conflict (or a lookup's answer). */
	class?: string;
	/** The delay chosen before the next attempt; absent when none followed. */
	delayMs?: number;
	/** Masked, at most 300 characters. */
	message?: string;
	execution?: string;
}
