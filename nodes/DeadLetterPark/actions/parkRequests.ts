import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	checkParkRequest,
	LIMITS,
	optionalInRange,
	type ParkRequest,
	parseMaskFields,
	runLink,
} from '../../../lib';
import { itemValueReader, optionalText } from '../../shared/itemValues';
import { forEachItem, showingErrors } from '../../shared/router';
import { sourceVersionOf } from '../../shared/sourceVersion';
import { classifyStatus, splitErrorItem } from './errorInput';

/** The records a Park run's items ask for, which item each came from, and the items refused. */
export interface ParkRequests {
	requests: ParkRequest[];
	/** Input item index to its request's index in `requests`. */
	requestOf: Map<number, number>;
	/** Input item index to its error output, why it was not parked (Continue On Fail only). */
	refused: Map<number, INodeExecutionData>;
	maskFields: string[];
}

/**
 * One request per item, filled from the item (an error output's `error` is recognised without
 * mapping), the parameters and the run (workflow, execution, the step that fed this node). An
 * item with a bad parameter is an error naming it, or with Continue On Fail a refused item, and
 * the others are parked.
 */
export async function parkRequestsOf(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<ParkRequests> {
	const workflow = context.getWorkflow();
	const executionId = context.getExecutionId();
	const baseUrl = context.getInstanceBaseUrl().replace(/\/+$/, '');
	const ownRunLink = runLink(baseUrl, workflow.id, executionId);
	let sourceStep = '';
	try {
		sourceStep = context.getInputSourceData()?.previousNode ?? '';
	} catch {
		/* no input source (first node): the Step parameter must say it */
	}
	// This workflow's fingerprint: the version of items that failed here, not in another workflow.
	const fingerprint = sourceVersionOf(context);
	const options = context.getNodeParameter('parkOptions', 0, {}) as IDataObject;
	const optionsOf = itemValueReader(context, items, 'parkOptions', {});
	const stepOf = itemValueReader(context, items, 'step');
	const classOf = itemValueReader(context, items, 'errorClass', 'auto');
	const keyOf = itemValueReader(context, items, 'idempotencyKey');
	// Mask Fields is read at the first item; an error names it.
	const maskFields = await showingErrors(context, () => parseMaskFields(options.maskFields), 0);

	const requests: ParkRequest[] = [];
	const requestOf = new Map<number, number>();
	const refused = new Map<number, INodeExecutionData>();
	await forEachItem(
		context,
		items,
		(index) => {
			const item = items[index];
			const failed = splitErrorItem(item.json);
			const chosenClass = String(classOf(index) ?? 'auto');
			const itemOptions = (optionsOf(index) ?? {}) as IDataObject;
			const failedWorkflowId = optionalText(itemOptions.workflowId);
			const failedExecutionId = optionalText(itemOptions.executionId);
			const request: ParkRequest = {
				workflowId: failedWorkflowId ?? workflow.id ?? 'unsaved',
				workflowName:
					optionalText(itemOptions.workflowName) ?? (failedWorkflowId ? undefined : workflow.name),
				executionId: failedExecutionId ?? executionId,
				step: optionalText(stepOf(index)) ?? (sourceStep || context.getNode().name),
				itemIndex:
					item.pairedItem &&
					typeof item.pairedItem === 'object' &&
					!Array.isArray(item.pairedItem) &&
					Number.isInteger(item.pairedItem.item)
						? item.pairedItem.item
						: index,
				idempotencyKey: optionalText(keyOf(index)),
				runLink: runLink(baseUrl, failedWorkflowId, failedExecutionId) ?? ownRunLink,
				integration: optionalText(itemOptions.integration),
				errorClass: chosenClass === 'auto' ? classifyStatus(failed.status) : chosenClass,
				errorMessage: failed.message,
				errorStatus: failed.status,
				alreadyHappened: optionalText(itemOptions.alreadyHappened),
				impact: optionalText(itemOptions.impact),
				owner: optionalText(itemOptions.owner),
				severity: optionalText(itemOptions.severity),
				payload: failed.payload,
				retentionDays:
					optionalInRange(itemOptions.retentionDays, LIMITS.retentionDays, index) ?? 90,
				sourceVersion:
					optionalText(itemOptions.sourceVersion) ??
					(failedWorkflowId && failedWorkflowId !== workflow.id ? undefined : fingerprint),
			};
			// Checked here, per item: one bad item must not fail the park of the others.
			checkParkRequest(request, index);
			requestOf.set(index, requests.push(request) - 1);
		},
		(errorOutput, index) => {
			refused.set(index, errorOutput);
		},
	);
	return { requests, requestOf, refused, maskFields };
}
