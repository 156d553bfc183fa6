import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { purgeExpiredEvents, type Store } from '../../../lib';
import { consumerName } from '../../shared/consumer';

const properties: INodeProperties[] = [
	{
		displayName: 'Purge Scope',
		name: 'purgeScope',
		type: 'options',
		options: [
			{ name: 'This Consumer', value: 'consumer' },
			{ name: 'All Consumers', value: 'all' },
		],
		default: 'consumer',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['purge'] } }, properties);

/** Purge: deletes event IDs past retention and says how many, once per run. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const scope = this.getNodeParameter('purgeScope', 0, 'consumer') as string;
	const consumer = scope === 'all' ? null : consumerName(this);
	const purged = await purgeExpiredEvents(store, consumer);
	return [[{ json: { consumer: consumer ?? 'all', purged }, pairedItem: { item: 0 } }]];
}
