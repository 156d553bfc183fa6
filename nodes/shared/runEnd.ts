import type { IExecuteFunctions } from 'n8n-workflow';

/** How an execution ended, as n8n passes it to its `workflowExecuteAfter` lifecycle handlers. */
export interface RunEnd {
	status?: string;
	waitTill?: Date | string | null;
	data?: {
		resultData?: { error?: { name?: string; message?: string }; lastNodeExecuted?: string };
	};
}

interface LifecycleHooks {
	addHandler?: (hook: string, handler: (run: RunEnd) => Promise<void>) => void;
}

/**
 * Runs `handler` when the execution running this node ends, however it ends (success, stopped,
 * timed out, failed, a worker drained it), in the process that ran it. n8n runs an execution's
 * lifecycle handlers as it ends; they are not part of n8n's public node interface, so where an
 * execution context carries none this returns false and the caller's hold (a lease, Retake
 * After) is what brings the work back. So it is when n8n dies with the run: no handler runs then.
 */
export function whenRunEnds(
	context: IExecuteFunctions,
	handler: (run: RunEnd) => Promise<void>,
): boolean {
	const hooks = (context as unknown as { additionalData?: { hooks?: LifecycleHooks } })
		.additionalData?.hooks;
	if (!hooks || typeof hooks.addHandler !== 'function') return false;
	hooks.addHandler('workflowExecuteAfter', async (run) => {
		// A handler that throws would fail n8n's own end-of-execution work: what it could not do
		// is left to the hold.
		await handler(run).catch(() => undefined);
	});
	return true;
}

/** Whether a run ended without success (a wait is not an end: the run resumes later). */
export const endedWithoutSuccess = (run: RunEnd): boolean =>
	run.status !== 'success' && run.status !== 'waiting';
