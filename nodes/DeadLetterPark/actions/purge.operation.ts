import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { purgeDeadLetters, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';

/** Purge: deletes closed records past retention (never open ones) and says how many. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const purged = await purgeDeadLetters(store).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	return [[{ json: { purged }, pairedItem: { item: 0 } }]];
}
