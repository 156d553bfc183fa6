import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { inRange, LIMITS, purgeMessages, type Store } from '../../../lib';
import { outboxStoreFor } from './outboxStore';
import { retentionDays } from '../../shared/descriptions';

const properties: INodeProperties[] = [
	retentionDays(
		30,
		'Delete messages done or dead for longer than this. Keep it longer than anyone may write the same key again: a purged key is a new message.',
	),
];

export const description = updateDisplayOptions({ show: { operation: ['purge'] } }, properties);

/** Purge: deletes messages settled longer ago than the retention; outputs how many. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outbox = await outboxStoreFor(this, store);
	const retentionDays = inRange(
		this.getNodeParameter('retentionDays', 0, 30),
		LIMITS.retentionDays,
	);
	const purged = await purgeMessages(outbox, retentionDays);
	return [
		[{ json: { purged, retentionDays }, pairedItem: items.length > 0 ? { item: 0 } : undefined }],
	];
}
