import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	LIMITS,
	maskText,
	maskValue,
	optionalInRange,
	parkItems,
	parseMaskFields,
	type ParkRequest,
	type Store,
} from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { sourceVersionOf } from '../../shared/sourceVersion';
import { toNodeError } from '../../shared/store';
import { classifyStatus, splitErrorItem } from './errorInput';

/**
 * Park: every input item becomes (or updates) one dead-letter record, in one statement. Items
 * from an error output are recognised without mapping. Outputs the items with `_deadLetter`.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const workflow = this.getWorkflow();
	const executionId = this.getExecutionId();
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	const runLink =
		workflow.id && executionId
			? `${baseUrl}/workflow/${workflow.id}/executions/${executionId}`
			: undefined;
	let sourceStep = '';
	try {
		sourceStep = this.getInputSourceData()?.previousNode ?? '';
	} catch {
		/* no input source (first node): the Step parameter must say it */
	}
	// This workflow's fingerprint: the version of items that failed here, not in another workflow.
	const fingerprint = sourceVersionOf(this);
	const options = this.getNodeParameter('parkOptions', 0, {}) as IDataObject;
	const optionsOf = itemValueReader(this, items, 'parkOptions', {});
	const stepOf = itemValueReader(this, items, 'step');
	const classOf = itemValueReader(this, items, 'errorClass', 'auto');
	const keyOf = itemValueReader(this, items, 'idempotencyKey');
	let maskFields: string[];
	try {
		maskFields = parseMaskFields(options.maskFields);
	} catch (error) {
		throw toNodeError(this, error, 0);
	}

	// One request per item; an item with a bad parameter is an error naming it (or, with
	// Continue On Fail, an error item) and the others are parked.
	const requests: ParkRequest[] = [];
	const requestOf = new Map<number, number>();
	const refused = new Map<number, string>();
	for (let index = 0; index < items.length; index++) {
		try {
			const item = items[index];
			const failed = splitErrorItem(item.json);
			const chosenClass = String(classOf(index) ?? 'auto');
			const itemOptions = (optionsOf(index) ?? {}) as IDataObject;
			const text = (value: unknown): string | undefined =>
				value === undefined || value === null || String(value).trim() === ''
					? undefined
					: String(value).trim();
			const failedWorkflowId = text(itemOptions.workflowId);
			const failedExecutionId = text(itemOptions.executionId);
			const request: ParkRequest = {
				workflowId: failedWorkflowId ?? workflow.id ?? 'unsaved',
				workflowName:
					text(itemOptions.workflowName) ?? (failedWorkflowId ? undefined : workflow.name),
				executionId: failedExecutionId ?? executionId,
				step: text(stepOf(index)) ?? (sourceStep || this.getNode().name),
				itemIndex:
					item.pairedItem &&
					typeof item.pairedItem === 'object' &&
					!Array.isArray(item.pairedItem) &&
					Number.isInteger(item.pairedItem.item)
						? item.pairedItem.item
						: index,
				idempotencyKey: text(keyOf(index)),
				runLink:
					failedWorkflowId && failedExecutionId
						? `${baseUrl}/workflow/${failedWorkflowId}/executions/${failedExecutionId}`
						: runLink,
				integration: text(itemOptions.integration),
				errorClass: chosenClass === 'auto' ? classifyStatus(failed.status) : chosenClass,
				errorMessage: failed.message,
				errorStatus: failed.status,
				alreadyHappened: text(itemOptions.alreadyHappened),
				impact: text(itemOptions.impact),
				owner: text(itemOptions.owner),
				severity: text(itemOptions.severity),
				payload: failed.payload,
				retentionDays:
					optionalInRange(itemOptions.retentionDays, LIMITS.retentionDays, index) ?? 90,
				sourceVersion:
					text(itemOptions.sourceVersion) ??
					(failedWorkflowId && failedWorkflowId !== workflow.id ? undefined : fingerprint),
			};
			requestOf.set(index, requests.push(request) - 1);
		} catch (error) {
			if (!this.continueOnFail()) throw toNodeError(this, error, index);
			refused.set(index, error instanceof Error ? error.message : String(error));
		}
	}

	const results = await parkItems(store, requests, { maskFields }).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	return [
		items.map((_item, index) => {
			const at = requestOf.get(index);
			if (at === undefined)
				return { json: { error: refused.get(index) ?? 'not parked' }, pairedItem: { item: index } };
			const request = requests[at];
			const result = results[at];
			return {
				json: {
					// What goes on to the next node (an alert, typically) is masked like the record.
					...(maskValue(request.payload, maskFields) as IDataObject),
					// The record's summary: everything an alert needs to name the item and its impact.
					_deadLetter: {
						id: result.id,
						status: result.status,
						failureCount: result.failureCount,
						created: result.created,
						runLink: request.runLink ?? null,
						workflowId: request.workflowId,
						workflowName: request.workflowName ?? null,
						step: request.step,
						class: request.errorClass,
						message:
							request.errorMessage === undefined
								? null
								: maskText(request.errorMessage, maskFields),
						idempotencyKey: request.idempotencyKey ?? null,
						itemIndex: request.itemIndex ?? null,
						impact: request.impact ?? null,
						alreadyHappened: request.alreadyHappened ?? null,
						owner: request.owner ?? null,
						severity: request.severity ?? null,
					},
				},
				pairedItem: { item: index },
			};
		}),
	];
}
