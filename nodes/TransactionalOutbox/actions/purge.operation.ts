import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { purgeMessages, type Store } from '../../../lib';
import { outboxStoreFor } from './outboxStore';

const properties: INodeProperties[] = [
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 30,
		description:
			'Delete messages done or dead for longer than this. Keep it longer than anyone may write the same key again: a purged key is a new message.',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['purge'] } }, properties);

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
