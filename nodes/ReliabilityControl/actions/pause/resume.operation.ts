import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import type { Store } from '../../../../lib';
import { changePauses } from './pauseChanges';

/** Resume reads Scope, Name, Actor and Reason, which the Pause resource declares for pause and resume. */
export const description: INodeProperties[] = [];

/** Resume: one change per item; an integration's held items move to replay requested. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return await changePauses(this, store, items, false);
}
