import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { LIMITS, type Store, traceItem } from '../../../../lib';
import { forEachItem } from '../../../shared/router';
import { range } from '../../../shared/range';

const properties: INodeProperties[] = [
	{
		displayName: 'Business ID',
		name: 'businessId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. INV-20931',
		description:
			'An event ID, an idempotency key or a part of one (at least 3 characters, case-insensitive). Each kind of record is matched by the whole ID first, else by the part.',
	},
	{
		displayName: 'Limit',
		name: 'traceLimit',
		type: 'number',
		typeOptions: range(LIMITS.traceLimit),
		default: 200,
		description: 'The most records to return; the newest are kept and Truncated says so',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['item'], operation: ['trace'] } },
	properties,
);

/**
 * Item > Trace: "where is item X?". One output item per input item: every claim, write step and
 * dead letter of the business ID as one timeline, oldest first, with links to the executions.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const out: INodeExecutionData[] = [];
	const baseUrl = this.getInstanceBaseUrl();
	await forEachItem(
		this,
		items,
		async (index) => {
			const result = await traceItem(
				store,
				String(this.getNodeParameter('businessId', index, '') ?? ''),
				{ baseUrl, limit: this.getNodeParameter('traceLimit', index, 200) as number },
			);
			out.push({ json: result as unknown as IDataObject, pairedItem: { item: index } });
		},
		(errorOutput) => out.push(errorOutput),
	);
	return [out];
}
