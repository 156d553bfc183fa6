import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { completeMessages, type Store } from '../../../lib';
import { outboxStoreFor } from './outboxStore';
import { settleItems, settleRequestOf } from './settleOutput';

/** Complete: marks the items' messages sent, each only under the generation its item names. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outbox = await outboxStoreFor(this, store);
	return await settleItems(
		this,
		items,
		(index) => settleRequestOf(this, index),
		async (requests) => await completeMessages(outbox, requests),
	);
}
