import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { parkedSummary, parkItems, type Store } from '../../../lib';
import { parkRequestsOf } from './parkRequests';
import { errorItem } from '../../shared/errorItem';
import {
	alreadyHappened,
	businessImpact,
	maskFieldsOption,
	parkOwner,
	parkSeverity,
	retentionDays,
} from '../../shared/descriptions';

/** What failed, why, what it means, and how the record is kept. */
const properties: INodeProperties[] = [
	{
		displayName: 'Step',
		name: 'step',
		type: 'string',
		default: '',
		placeholder: 'the node this node is connected to',
		description:
			'The step the item failed at. Empty: the node whose output feeds this one (its error output, typically).',
	},
	{
		displayName: 'Error Class',
		name: 'errorClass',
		type: 'options',
		options: [
			{
				name: 'Conflict',
				value: 'conflict',
			},
			{
				name: 'Detect From the Error',
				value: 'auto',
				description: '4xx is permanent, 408/425/429/5xx exhausted, anything else execution',
			},
			{
				name: 'Exhausted',
				value: 'exhausted',
			},
			{
				name: 'Invalid',
				value: 'invalid',
			},
			{
				name: 'Permanent',
				value: 'permanent',
			},
			{
				name: 'Rate Limited',
				value: 'rate_limited',
			},
			{
				name: 'Unknown Outcome',
				value: 'unknown_outcome',
			},
		],
		default: 'auto',
	},
	{
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		description:
			'The key of the write that failed, so a replay is recognised as the same operation. Empty: the item is identified by its payload.',
	},
	{
		displayName: 'Park Options',
		name: 'parkOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			alreadyHappened,
			businessImpact(),
			{
				displayName: 'Failed Execution ID',
				name: 'executionId',
				type: 'string',
				default: '',
				description:
					'The execution the item failed in, when it is not this one (an Error Trigger workflow): the record links to that run. Empty: this execution.',
			},
			{
				displayName: 'Failed Workflow ID',
				name: 'workflowId',
				type: 'string',
				default: '',
				description:
					'The workflow the item failed in, when it is not this one (an Error Trigger workflow). Empty: this workflow.',
			},
			{
				displayName: 'Failed Workflow Name',
				name: 'workflowName',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.workflow.name }}',
			},
			{
				displayName: 'Integration',
				name: 'integration',
				type: 'string',
				default: '',
				placeholder: 'e.g. crm',
				description: 'The system the step talks to. While it is paused, items are parked as held.',
			},
			maskFieldsOption(
				'e.g. apiKey, ssn',
				'Comma-separated field names to mask, in any spelling (ssn matches SSN and s-s-n), besides the secrets always masked: authorization, cookies, API keys, passwords, secrets and tokens',
			),
			parkOwner(),
			retentionDays(90, 'How long a closed record is kept after it was parked'),
			parkSeverity,
			{
				displayName: 'Source Version',
				name: 'sourceVersion',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.versionId }}',
				description:
					"The failed workflow's version, when you know it (n8n does not tell nodes their workflow's version ID). Empty: a fingerprint of the nodes connected to this one, when the item failed in this workflow.",
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { operation: ['park'] } }, properties);

/**
 * Park: every input item becomes (or updates) one dead-letter record, in one statement. Items
 * from an error output are recognised without mapping. Outputs the items with `_deadLetter`.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const { requests, requestOf, refused, maskFields } = await parkRequestsOf(this, items);
	const results = await parkItems(store, requests, { maskFields });
	return [
		items.map((_item, index) => {
			const at = requestOf.get(index);
			if (at === undefined) return refused.get(index) ?? errorItem('not parked', index);
			const request = requests[at];
			const result = results[at];
			// Checked per item above, so the engine refuses none; if it does, that item alone.
			if (result.refused) return errorItem(result.refused, index);
			return {
				json: {
					// What goes on to the next node (an alert, typically): the payload as the record
					// holds it, masked.
					...(result.payload as IDataObject),
					// The record's summary: everything an alert needs to name the item and its impact.
					_deadLetter: parkedSummary(request, result),
				},
				pairedItem: { item: index },
			};
		}),
	];
}
