import type { IExecuteFunctions } from 'n8n-workflow';
import {
	keeperFor,
	resumeExecutionClaims,
	runLink,
	settleExecutionEnd,
	type Store,
} from '../../lib';
import type { RunEnd } from './runEnd';

/**
 * Holds an execution's inbox claims until the execution ends. While it runs, the process renews
 * them (the keeper). n8n runs the handlers of an execution's lifecycle hooks when it ends, in the
 * process that ran it (queue-mode workers included), and an execution context carries those
 * hooks: one handler per execution settles the claims by how it ended (settleExecutionEnd: done,
 * parked whatever error workflow the workflow names, held through a wait). The hooks are not part
 * of n8n's public node interface, so their absence is handled: the claims are then held for at
 * most an hour, and a Complete step ends them.
 *
 * An execution that waited past n8n's offload threshold (a Wait over 65 s) resumes in a new
 * process, or on another worker, with new hooks and none of this handler: every node of the
 * package that runs in it attaches the handler again (holdAfterResume), and when none does,
 * Recover asks n8n how the execution ended.
 */
interface LifecycleHooks {
	addHandler?: (hook: string, handler: (...args: never[]) => Promise<void>) => void;
}

/** Longest an execution's claims are held while it runs (a run longer than this lets them lapse). */
const MAX_HOLD_MS = 24 * 3600_000;
const MAX_HOLD_WITHOUT_HOOKS_MS = 3600_000;
/** The lease of claims a resumed execution holds (the claim's own Recover After is not known there). */
const RESUMED_LEASE_SECONDS = 60;

/** The hooks of executions whose end this process settles (a handler attached). */
const withHandler = new WeakSet<object>();
/** The hooks of executions already looked at for claims to hold after a resume. */
const lookedAt = new WeakSet<object>();

const hooksOf = (context: IExecuteFunctions): LifecycleHooks | undefined => {
	const hooks = (context as unknown as { additionalData?: { hooks?: LifecycleHooks } })
		.additionalData?.hooks;
	return hooks && typeof hooks.addHandler === 'function' ? hooks : undefined;
};

/** Returns whether n8n will say when the execution ends (false: only a Complete step ends the hold). */
export function holdUntilExecutionEnds(
	context: IExecuteFunctions,
	store: Store,
	leaseSeconds: number,
): boolean {
	const executionId = context.getExecutionId();
	const keeper = keeperFor(store, leaseSeconds);
	const hooks = hooksOf(context);
	if (!hooks?.addHandler) {
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
		const last = run.data?.resultData?.lastNodeExecuted;
		const waitTill = run.waitTill ? new Date(run.waitTill) : undefined;
		const stopped = run.status === 'canceled';
		// A failed settle leaves the claims to lapse: Recover then runs the item again, safely.
		await settleExecutionEnd(store, {
			...endedAt(context, stopped ? (running ?? last) : (last ?? running)),
			status: run.status,
			reason: error?.message
				? stopped
					? `the execution was stopped: ${error.message}${error.name ? ` (${error.name})` : ''}`
					: error.message
				: undefined,
			waitTill: waitTill && !Number.isNaN(waitTill.getTime()) ? waitTill : undefined,
			leaseSeconds,
			testRun: isTestRun(context),
			errorWorkflowNamed: namesErrorWorkflow(context),
			ifGone: ifGoneOf(context),
			runLimitSeconds: runLimitOf(context),
		}).catch(() => undefined);
	});
	return true;
}

/**
 * In an execution that resumed after a Wait (n8n ran it on with new hooks, maybe in another
 * process), attaches the end-of-execution handler again, once per execution, when an Event Dedupe
 * node before this one claimed and the execution still holds its claims: its end then settles
 * them as any execution's. Costs nothing where no Event Dedupe node precedes this one, or where
 * the handler is attached already (an execution that never waited).
 */
export async function holdAfterResume(context: IExecuteFunctions, store: Store): Promise<void> {
	const hooks = hooksOf(context);
	if (!hooks || withHandler.has(hooks) || lookedAt.has(hooks)) return;
	lookedAt.add(hooks);
	if (!claimsBefore(context)) return;
	const held = await resumeExecutionClaims(store, context.getExecutionId(), RESUMED_LEASE_SECONDS);
	if (held > 0) holdUntilExecutionEnds(context, store, RESUMED_LEASE_SECONDS);
}

/** Whether an Event Dedupe node (which may have claimed) comes before this node in the workflow. */
function claimsBefore(context: IExecuteFunctions): boolean {
	if (typeof context.getParentNodes !== 'function') return false;
	try {
		return context
			.getParentNodes(context.getNode().name)
			.some((node) => !node.disabled && node.type.endsWith('.eventDedupe'));
	} catch {
		return false;
	}
}

/** Runs n8n starts from the editor or an evaluation, for which it runs no error workflow. */
const TEST_MODES = new Set(['manual', 'evaluation']);

/**
 * A run from the editor or an evaluation: n8n runs no error workflow for it, and the person
 * testing sees its failure; its failed items stay failed and are new when run again.
 */
const isTestRun = (context: IExecuteFunctions): boolean =>
	typeof context.getMode === 'function' && TEST_MODES.has(context.getMode());

/**
 * Whether the workflow names an error workflow (any: n8n runs it for a failed run, and the bundled
 * Error handler parks a run whose items no inbox kept). An n8n whose node context gives no
 * settings is taken to name one.
 */
function namesErrorWorkflow(context: IExecuteFunctions): boolean {
	if (typeof context.getWorkflowSettings !== 'function') return true;
	const errorWorkflow = context.getWorkflowSettings()?.errorWorkflow;
	return typeof errorWorkflow === 'string' && errorWorkflow !== '' && errorWorkflow !== 'DEFAULT';
}

/**
 * What it means, after a wait, when n8n no longer has the execution: n8n deletes an ended run
 * that its workflow's settings do not save. A workflow that saves no success but every failure
 * lost only a success (`done`); any other, a person checks.
 */
function ifGoneOf(context: IExecuteFunctions): 'done' | 'check' {
	if (typeof context.getWorkflowSettings !== 'function') return 'check';
	const settings = context.getWorkflowSettings() ?? {};
	return settings.saveDataSuccessExecution === 'none' && settings.saveDataErrorExecution !== 'none'
		? 'done'
		: 'check';
}

/** The workflow's timeout in seconds, when it sets one: the longest a run may take. */
function runLimitOf(context: IExecuteFunctions): number | undefined {
	if (typeof context.getWorkflowSettings !== 'function') return undefined;
	const timeout = Number(context.getWorkflowSettings()?.executionTimeout);
	return Number.isFinite(timeout) && timeout > 0 ? timeout : undefined;
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

/**
 * The executions that called this one as a sub-workflow, nearest first: n8n hands a sub-workflow
 * its parent's execution (an Execute Workflow node's call), and the parent's own context names the
 * grandparent. Empty for an execution that no workflow called (a trigger's, Recover's re-run).
 */
export function callersOf(context: IExecuteFunctions): string[] {
	const parent =
		typeof context.getExecutionContext === 'function'
			? context.getExecutionContext()?.parentExecutionId
			: undefined;
	const grandparent = (
		context as unknown as {
			runExecutionData?: {
				parentExecution?: { executionContext?: { parentExecutionId?: string } };
			};
		}
	).runExecutionData?.parentExecution?.executionContext?.parentExecutionId;
	return [parent, grandparent].filter(
		(id, at, all): id is string =>
			typeof id === 'string' &&
			id !== '' &&
			id !== context.getExecutionId() &&
			all.indexOf(id) === at,
	);
}
