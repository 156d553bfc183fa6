import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { deadLetterStats, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';

/** Stats: one item, computed in SQL. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const stats = await deadLetterStats(store, {
		days: this.getNodeParameter('days', 0, 30) as number,
		workflowId: (this.getNodeParameter('statsWorkflowId', 0, '') as string) || undefined,
	}).catch((error: unknown) => {
		throw toNodeError(this, error, 0);
	});
	return [[{ json: stats as unknown as IDataObject, pairedItem: { item: 0 } }]];
}
