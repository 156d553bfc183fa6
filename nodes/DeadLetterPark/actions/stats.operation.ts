import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { deadLetterStats, LIMITS, type Store } from '../../../lib';
import { range } from '../../shared/range';
import { showingErrors } from '../../shared/router';

/** Over how many days, of which workflow. */
const properties: INodeProperties[] = [
	{
		displayName: 'Days',
		name: 'days',
		type: 'number',
		typeOptions: range(LIMITS.statsDays),
		default: 30,
		description: 'How many days of parking to count (open items count whatever their age)',
	},
	{
		displayName: 'Workflow ID',
		name: 'statsWorkflowId',
		type: 'string',
		default: '',
		description: 'Only this workflow; empty for all',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['stats'] } }, properties);

/** Stats: one item, computed in SQL. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	// The settings come from the first item; an error names it.
	const stats = await showingErrors(
		this,
		async () =>
			await deadLetterStats(store, {
				days: this.getNodeParameter('days', 0, 30) as number,
				workflowId: (this.getNodeParameter('statsWorkflowId', 0, '') as string) || undefined,
			}),
		0,
	);
	return [[{ json: stats as unknown as IDataObject, pairedItem: { item: 0 } }]];
}
