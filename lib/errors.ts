/**
 * The engine's error hierarchy. Every error carries a `cause` when it wraps another one; the
 * node layer turns them into NodeOperationError with the item index and a description that
 * says what to do.
 */
export class ReliabilityError extends Error {
	constructor(
		message: string,
		/** What the operator should do about it, shown as the error's description in n8n. */
		readonly hint?: string,
		options?: { cause?: unknown },
	) {
		super(message, options);
		this.name = new.target.name;
	}
}

/** A configuration value (schema name, credential field) that cannot be used as given. */
export class ConfigurationError extends ReliabilityError {}

/**
 * The store could not be reached or used. Raised before any side effect: a write whose key
 * was not recorded is never sent.
 */
export class StoreUnavailableError extends ReliabilityError {}

/** One input item that cannot be processed as given (missing key, wrong type). */
export class ItemError extends ReliabilityError {
	constructor(
		message: string,
		readonly itemIndex: number,
		hint?: string,
	) {
		super(message, hint);
	}
}

export const isReliabilityError = (error: unknown): error is ReliabilityError =>
	error instanceof ReliabilityError;
