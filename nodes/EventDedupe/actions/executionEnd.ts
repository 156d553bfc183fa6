import type { IExecuteFunctions } from 'n8n-workflow';
import {
	ExecutionEnd,
	failExecutionWithoutHandler,
	keeperFor,
	runLink,
	settleExecutionClaims,
	stopExecution,
	type Store,
} from '../../../lib';
import type { RunEnd } from '../../shared/runEnd';

/**
 * Holds this execution's inbox claims until the execution ends. While it runs, the process
 * renews them (the keeper). n8n runs the handlers of an execution's lifecycle hooks when it ends,
 * in the process that ran it (queue-mode workers included), and an execution context carries
 * those hooks: one handler per execution settles the claims by how it ended. The hooks are not
 * part of n8n's public node interface, so their absence is handled: the claims are then held
 * for at most an hour, and a Complete step ends them.
 *
 * A cancelled execution (n8n's Stop, the API's stop, a workflow timeout, a worker's drain) ends
 * with status `canceled` and n8n runs no error workflow for it: the handler parks its items as
 * stopped, naming the node that was running, so none is left failed in no letter. A failed
 * execution whose workflow names no error workflow is settled the same way, its items parked with
 * the error: nothing else would park them.
 */
interface LifecycleHooks {
	addHandler?: (hook: string, handler: (...args: never[]) => Promise<void>) => void;
}

/** Longest an execution's claims are held while it runs (a run longer than this lets them lapse). */
const MAX_HOLD_MS = 24 * 3600_000;
const MAX_HOLD_WITHOUT_HOOKS_MS = 3600_000;

const withHandler = new WeakSet<object>();

const endOf = (run: RunEnd): ExecutionEnd =>
	run.status === 'success'
		? ExecutionEnd.success
		: run.status === 'waiting'
			? ExecutionEnd.waiting
			: run.status === 'crashed'
				? ExecutionEnd.crashed
				: ExecutionEnd.error;

/** Returns whether n8n will say when the execution ends (false: only a Complete step ends the hold). */
export function holdUntilExecutionEnds(
	context: IExecuteFunctions,
	store: Store,
	leaseSeconds: number,
): boolean {
	const executionId = context.getExecutionId();
	const keeper = keeperFor(store, leaseSeconds);
	const hooks = (context as unknown as { additionalData?: { hooks?: LifecycleHooks } })
		.additionalData?.hooks;
	if (!hooks || typeof hooks.addHandler !== 'function') {
		keeper.keep(executionId, MAX_HOLD_WITHOUT_HOOKS_MS);
		return false;
	}
	keeper.keep(executionId, MAX_HOLD_MS);
	if (withHandler.has(hooks)) return true;
	withHandler.add(hooks);
	// The node running now: the step a stopped execution's items were stopped at (n8n sets
	// lastNodeExecuted only once a node finishes).
	let running: string | undefined = context.getNode().name;
	hooks.addHandler('nodeExecuteBefore', async (nodeName: string) => {
		running = nodeName;
	});
	hooks.addHandler('workflowExecuteAfter', async (run: RunEnd) => {
		keeper.drop(executionId);
		const error = run.data?.resultData?.error;
		if (run.status === 'canceled') {
			await stopExecution(store, {
				...endedAt(context, running ?? run.data?.resultData?.lastNodeExecuted),
				reason: error?.message
					? `the execution was stopped: ${error.message}${error.name ? ` (${error.name})` : ''}`
					: undefined,
			}).catch(() => undefined);
			return;
		}
		if (endOf(run) === ExecutionEnd.error && !leftToOthers(context)) {
			await failExecutionWithoutHandler(store, {
				...endedAt(context, run.data?.resultData?.lastNodeExecuted ?? running),
				reason: error?.message || undefined,
			}).catch(() => undefined);
			return;
		}
		const waitTill = run.waitTill ? new Date(run.waitTill) : undefined;
		// A failed settle leaves the claims to lapse: Recover then runs the item again, safely.
		await settleExecutionClaims(store, executionId, {
			status: endOf(run),
			message: run.data?.resultData?.error?.message,
			waitTill: waitTill && !Number.isNaN(waitTill.getTime()) ? waitTill : undefined,
			leaseSeconds,
		}).catch(() => undefined);
	});
	return true;
}

/** Runs n8n starts from the editor or an evaluation, for which it runs no error workflow. */
const TEST_MODES = new Set(['manual', 'evaluation']);

/**
 * Whether a failure of this execution is left to others: to the error workflow its settings
 * name, or, for a run from the editor or an evaluation (n8n runs no error workflow for those),
 * to the person testing, whose failed items stay failed and are new when run again. An n8n whose
 * node context gives no settings is taken to run the error workflow. An Error Trigger inside the
 * workflow itself (which n8n runs when the settings name none) does not count: it is the user's
 * own notice and parks nothing unless it settles the execution, and the first to settle it
 * (`execution_reports`) makes the other park nothing.
 */
function leftToOthers(context: IExecuteFunctions): boolean {
	if (typeof context.getWorkflowSettings !== 'function') return true;
	if (typeof context.getMode === 'function' && TEST_MODES.has(context.getMode())) return true;
	const errorWorkflow = context.getWorkflowSettings()?.errorWorkflow;
	return typeof errorWorkflow === 'string' && errorWorkflow !== '' && errorWorkflow !== 'DEFAULT';
}

/** Where an execution ended (its workflow, the node, its run link), for the letters of its items. */
function endedAt(context: IExecuteFunctions, step: string | undefined) {
	const executionId = context.getExecutionId();
	const workflow = context.getWorkflow();
	const baseUrl = context.getInstanceBaseUrl().replace(/\/+$/, '');
	return {
		executionId,
		workflowId: workflow.id,
		workflowName: workflow.name,
		step,
		runLink: runLink(baseUrl, workflow.id, executionId),
	};
}
