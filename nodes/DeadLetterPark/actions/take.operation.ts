import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { checkedNumber, type Store, takeForReplay } from '../../../lib';
import { toNodeError } from '../../shared/store';

/**
 * Take for Replay: takes the records asked to be replayed, atomically, for this run (two
 * overlapping replay runs never take one record), and outputs each record with its payload and
 * the generation that Update Status must present to settle it. Runs once, whatever the input.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	try {
		const records = await takeForReplay(store, {
			taker: `${String(this.getNodeParameter('taker', 0, '') || 'replay workflow').trim()} (execution ${this.getExecutionId()})`,
			limit: checkedNumber('Limit', this.getNodeParameter('takeLimit', 0, 100), {
				min: 1,
				max: 10_000,
				integer: true,
			}),
			workflowId: String(this.getNodeParameter('takeWorkflowId', 0, '') ?? '').trim() || undefined,
			staleAfterMinutes: checkedNumber(
				'Retake After (Minutes)',
				this.getNodeParameter('staleAfterMinutes', 0, 30),
				{ min: 1, max: 10_080, integer: true },
			),
		});
		return [
			records.map((record) => ({
				json: record as unknown as IDataObject,
				pairedItem: { item: 0 },
			})),
		];
	} catch (error) {
		throw toNodeError(this, error);
	}
}
