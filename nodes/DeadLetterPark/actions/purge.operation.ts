import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { purgeDeadLetters, type Store } from '../../../lib';

/** Purge has no parameters: each record carries its own retention. */
export const description: INodeProperties[] = [];

/** Purge: deletes closed records past retention (never open ones) and says how many. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const purged = await purgeDeadLetters(store);
	return [[{ json: { purged }, pairedItem: { item: 0 } }]];
}
