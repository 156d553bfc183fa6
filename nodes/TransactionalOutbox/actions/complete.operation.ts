import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { completeMessages, type Store } from '../../../lib';
import { outboxStoreFor } from './outboxStore';
import { settleItems, settleRequestOf } from './settleOutput';

/** Complete reads only Message ID and Generation, which it shares with Fail (the node's shell holds them). */
export const description: INodeProperties[] = [];

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
