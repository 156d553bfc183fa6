import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { purgeMessages, type Store } from '../../../lib';
import { outboxStoreFor } from './outboxStore';

/** Purge: deletes messages settled longer ago than the retention; outputs how many. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outbox = await outboxStoreFor(this, store);
	const retentionDays = Number(this.getNodeParameter('retentionDays', 0, 30));
	const purged = await purgeMessages(outbox, Math.max(1, Math.floor(retentionDays)));
	return [
		[{ json: { purged, retentionDays }, pairedItem: items.length > 0 ? { item: 0 } : undefined }],
	];
}
