import { DEFAULT_POLICY, type WriteContext } from '../../lib/idempotency';

/**
 * A write context for the engine's tests: one execution of one workflow's node, with backoffs
 * short enough for a test; the caller sets what its test is about.
 */
export const writeContext = (
	fields: Pick<WriteContext, 'workflowId' | 'executionId' | 'node'> & Partial<WriteContext>,
): WriteContext => ({
	retentionDays: 30,
	policy: { ...DEFAULT_POLICY, baseDelayMs: 20, maxDelayMs: 50, deadlineMs: 10_000 },
	onUnknown: 'retry',
	concurrency: 4,
	maxSavedBodyChars: 65_536,
	park: true,
	...fields,
});

/** Makes write contexts; each is a new execution of the file's node. */
export interface WriteContexts {
	(overrides?: Partial<WriteContext>): WriteContext;
	/** The next execution's ID, for a test that runs a context it already has once more. */
	nextExecutionId(): string;
}

/**
 * Write contexts for a test file: each call is a new execution (`exec-1`, `exec-2`, ...) of the
 * workflow and node the file names, with what the file sets for all its runs; a test overrides
 * only what it is about.
 */
export function writeContexts(
	base: Pick<WriteContext, 'workflowId' | 'node'> & Partial<WriteContext>,
	executionPrefix = 'exec-',
): WriteContexts {
	let execution = 0;
	const nextExecutionId = () => `${executionPrefix}${++execution}`;
	const contexts = (overrides: Partial<WriteContext> = {}) =>
		writeContext({ executionId: nextExecutionId(), ...base, ...overrides });
	return Object.assign(contexts, { nextExecutionId });
}
