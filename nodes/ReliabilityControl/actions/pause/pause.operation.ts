import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import type { Store } from '../../../../lib';
import { changePauses } from './pauseChanges';

/** Pause reads Scope, Name, Actor and Reason, which the Pause resource declares for pause and resume. */
export const description: INodeProperties[] = [];

/** Pause: one change per item, each with who and why. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return await changePauses(this, store, items, true);
}
