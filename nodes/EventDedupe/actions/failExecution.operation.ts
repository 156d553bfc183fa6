import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	failedAfter,
	failExecution,
	type FailedExecution,
	ItemError,
	KeyStatus,
	parkedSummary,
	parkKeptItems,
	type ParkRequest,
	runLink,
	type Store,
} from '../../../lib';
import {
	type ItemValueReader,
	itemValueReader,
	optionalText,
	requiredText,
} from '../../shared/itemValues';
import { forEachItem } from '../../shared/router';
import { businessImpact, parkOwner, parkSeverity } from '../../shared/descriptions';
import { keptItemLetter, UNFINISHED_IMPACT } from './keptItemLetter';

const properties: INodeProperties[] = [
	{
		displayName: 'Failed Execution ID',
		name: 'failedExecutionId',
		type: 'string',
		default: '={{ $json.execution?.id }}',
		description:
			"The execution that failed; in an Error Trigger workflow, {{ $JSON.execution.ID }}. Empty when a trigger failed (n8n's Error Trigger then gives trigger instead of execution): no execution ran, so there is nothing to settle, and the item goes to Not Kept with the trigger's error for an execution-level record.",
	},
	{
		displayName: 'Crashed',
		name: 'crashed',
		type: 'boolean',
		default: false,
		description:
			"Whether the execution crashed (n8n or a queue-mode worker died mid-run) rather than failed: its items are then left to the Recover workflow to run again, instead of being parked, and the execution no longer holds them (a worker n8n gave up on as stalled that still runs cannot settle them). The bundled Error handler sets it from what n8n reports, never from the message text: a WorkflowCrashedError, or a failure that names no node that ran (n8n's failure of a stalled queue-mode job). Items the execution's own end-of-execution hook had failed are parked either way: it did end.",
	},
	{
		displayName: 'Error Message',
		name: 'failureMessage',
		type: 'string',
		default: '={{ $json.execution?.error?.message }}',
	},
	{
		displayName: 'Failed Workflow ID',
		name: 'failedWorkflowId',
		type: 'string',
		default: '={{ $json.workflow?.id }}',
	},
	{
		displayName: 'Failed Workflow Name',
		name: 'failedWorkflowName',
		type: 'string',
		default: '={{ $json.workflow?.name }}',
	},
	{
		displayName: 'Failed Node',
		name: 'failedNode',
		type: 'string',
		default: '={{ $json.execution?.lastNodeExecuted }}',
		description: 'The last node that ran: the step the parked items failed at',
	},
	{
		displayName: 'Caller Execution ID',
		name: 'callerExecutionId',
		type: 'string',
		default: "={{ $json.execution?.executionContext?.parentExecutionId ?? '' }}",
		description:
			"The execution that ran the failed one as a sub-workflow (or Recover's run that re-ran an item), as n8n's Error Trigger gives it. When it holds an item, a failed run that kept no items of its own is that item's failure, parked with it: nothing goes to Not Kept.",
	},
	{
		displayName: 'Park Options',
		name: 'failOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [businessImpact('e.g. order not in ERP'), parkOwner(), parkSeverity],
	},
];

export const description = updateDisplayOptions(
	{ show: { operation: ['failExecution'] } },
	properties,
);

/**
 * Settle Failed Execution, the error workflow's step. Per failed execution: its open write keys
 * are marked at once (failed if nothing was sent, unknown if it may have been), so a redelivery
 * reconciles them now; its inbox claims are failed and their items parked, each a dead letter
 * about the item itself (the failed workflow, its execution's link, the error, the last node,
 * the business item as payload, so Replay re-runs it); for a crash they are left to Recover,
 * which runs them again. Claims of the other modes are released.
 *
 * Outputs: Parked (the records just parked, for the alert) and Not Kept (executions whose items
 * the inbox did not keep, and failed triggers, which ran no execution: the caller parks the
 * execution-level failure, with the error as the item's `error`).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const read = {
		executionId: itemValueReader(this, items, 'failedExecutionId'),
		workflowId: itemValueReader(this, items, 'failedWorkflowId', ''),
		workflowName: itemValueReader(this, items, 'failedWorkflowName', ''),
		lastNode: itemValueReader(this, items, 'failedNode', ''),
		caller: itemValueReader(this, items, 'callerExecutionId', ''),
		crashed: itemValueReader(this, items, 'crashed', false),
		message: itemValueReader(this, items, 'failureMessage', ''),
	};
	const options = this.getNodeParameter('failOptions', 0, {}) as IDataObject;
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	const parked: INodeExecutionData[] = [];
	const notKept: INodeExecutionData[] = [];
	await forEachItem(
		this,
		items,
		async (index) => {
			const triggerFailure = triggerErrorOf(items[index].json);
			if (triggerFailure && !optionalText(read.executionId(index))) {
				// A trigger failed (a poll, a listener): n8n started no execution, so no claim or
				// key is the run's; what a person needs is the trigger's error, parked by the caller.
				const message =
					optionalText(read.message(index)) ??
					optionalText(triggerFailure.message) ??
					'the trigger failed';
				notKept.push(notKeptItem(items[index], index, message, { trigger: true }));
				return;
			}
			const failure = failureOf(read, index);
			const caller = optionalText(read.caller(index));
			const settled = await failExecution(store, {
				...failure,
				callers: caller ? [caller] : [],
			});
			// Settled before, or being settled (its end-of-execution hook; n8n reporting a crash again).
			if (settled.repeated) return;
			const workflowId = optionalText(read.workflowId(index));
			const step = optionalText(read.lastNode(index)) ?? 'unknown step';
			const summary: IDataObject = {
				executionId: failure.executionId,
				crashed: failure.crashed,
				recovering: settled.recovering,
				released: settled.released,
				keys: settled.keys,
			};
			if (settled.items.length === 0) {
				// Items the inbox kept are someone's now (Recover, a redelivery, or the letter of the
				// workflow that called this one as a sub-workflow): nothing execution-level to park or
				// alert about. The error goes along as `error`, where Dead Letter Park reads why an
				// item failed.
				if (settled.kept === 0 && settled.heldAbove === 0)
					notKept.push(notKeptItem(items[index], index, failure.message, summary));
				return;
			}
			const letters = await parkUnfinished(store, settled, summary, {
				...failure,
				workflowId,
				workflowName: optionalText(read.workflowName(index)),
				step,
				runLink: runLink(baseUrl, workflowId, failure.executionId),
				options,
			});
			for (const json of letters) parked.push({ json, pairedItem: { item: index } });
		},
		(failed, index) =>
			notKept.push({
				json: { ...items[index].json, error: failed.json.error },
				pairedItem: { item: index },
			}),
	);
	return [parked, notKept];
}

/** The failed execution an item reports: which, whether it crashed, and its error. */
function failureOf(
	read: Record<'executionId' | 'crashed' | 'message', ItemValueReader>,
	index: number,
): { executionId: string; crashed: boolean; message: string } {
	const executionId = requiredText(
		read.executionId,
		'failed execution ID',
		index,
		'Set Failed Execution ID; in an Error Trigger workflow use {{ $json.execution.id }}.',
	);
	const crashed = crashedOf(read.crashed(index), index);
	const message =
		optionalText(read.message(index)) ??
		(crashed ? 'the execution crashed' : 'the execution failed');
	return { executionId, crashed, message };
}

/** An item for Not Kept: the input with the failure as its `error`, for the caller to park. */
const notKeptItem = (
	item: INodeExecutionData,
	index: number,
	message: string,
	settled: IDataObject,
): INodeExecutionData => ({
	json: { ...item.json, error: { message }, _settled: settled },
	pairedItem: { item: index },
});

/** Where an execution failed, as its dead letters say it, and the node's Park Options. */
interface FailedAt {
	executionId: string;
	message: string;
	workflowId?: string;
	workflowName?: string;
	step: string;
	runLink?: string;
	options: IDataObject;
}

/**
 * Parks each item the failed execution's claims kept, one dead letter per item (all or none),
 * and gives each letter's output for the alert, with the execution's `summary` as `_settled`.
 */
async function parkUnfinished(
	store: Store,
	settled: FailedExecution,
	summary: IDataObject,
	at: FailedAt,
): Promise<IDataObject[]> {
	const unknownSteps = settled.keys.filter((k) => k.status === KeyStatus.unknown).length;
	const requests: ParkRequest[] = settled.items.map((item) => ({
		...keptItemLetter(item),
		workflowId: at.workflowId ?? item.workflowId ?? 'unknown',
		workflowName: at.workflowName,
		executionId: at.executionId,
		step: at.step,
		runLink: at.runLink,
		errorClass: 'execution',
		errorMessage: at.message,
		alreadyHappened: failedAfter(at.step, unknownSteps),
		impact: optionalText(at.options.impact) ?? UNFINISHED_IMPACT,
		owner: optionalText(at.options.owner),
		severity: optionalText(at.options.severity),
	}));
	const results = await parkKeptItems(store, requests, {
		executionId: at.executionId,
		claims: settled.items,
	});
	const letters = results.map((result, i) => ({
		deadLetterId: result.id,
		status: result.status,
		workflowId: at.workflowId ?? null,
		workflowName: at.workflowName ?? null,
		step: at.step,
		idempotencyKey: requests[i].idempotencyKey,
		eventId: settled.items[i].eventId,
		message: at.message,
		impact: requests[i].impact,
		owner: requests[i].owner ?? null,
		severity: requests[i].severity ?? null,
		runLink: at.runLink ?? null,
		_settled: summary,
		// The record's summary, as Park outputs it: what an alert needs.
		_deadLetter: parkedSummary(requests[i], result),
	}));
	// An item whose letter took the issue a write letter of it was alerted in is not alerted again.
	return letters.filter((_, i) => !results[i].alreadyAlerted);
}

/** Crashed, as a mapped expression gives it: a boolean, or its text. */
function crashedOf(raw: unknown, index: number): boolean {
	if (typeof raw === 'boolean') return raw;
	if (raw === 'true' || raw === 'false') return raw === 'true';
	throw new ItemError(
		`Item ${index}: Crashed must be true or false, got ${JSON.stringify(raw)}`,
		index,
		'Map Crashed to a boolean expression.',
	);
}

/**
 * The error of a failed trigger, as n8n's Error Trigger gives it: `trigger` in place of
 * `execution` when the failure happened in a trigger (a poll, a listener) and no execution ran.
 */
function triggerErrorOf(json: IDataObject): { message?: unknown } | undefined {
	if (json.execution !== undefined && json.execution !== null) return undefined;
	const trigger = json.trigger as IDataObject | undefined;
	if (!trigger || typeof trigger !== 'object') return undefined;
	const error = trigger.error as IDataObject | undefined;
	return error && typeof error === 'object' ? { message: error.message } : {};
}
