import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	pause as pauseScope,
	type PauseScope,
	resume as resumeScope,
	type Store,
} from '../../../../lib';
import { outputOfEachItem } from '../../../shared/router';
import { trimmedText } from '../../../shared/itemValues';

/** A text parameter of an item, trimmed. */
export const textParameter = (context: IExecuteFunctions, name: string, index: number): string =>
	trimmedText(context.getNodeParameter(name, index, ''));

/** Pauses (or resumes) each item's scope and name, one change per item, each with who and why. */
export async function changePauses(
	context: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
	paused: boolean,
): Promise<INodeExecutionData[][]> {
	return [
		await outputOfEachItem(context, items, async (index) => {
			const args = [
				store,
				textParameter(context, 'scope', index) as PauseScope,
				textParameter(context, 'pauseName', index),
				textParameter(context, 'actor', index),
				textParameter(context, 'reason', index),
			] as const;
			const state = paused ? await pauseScope(...args) : await resumeScope(...args);
			return { json: state as unknown as IDataObject, pairedItem: { item: index } };
		}),
	];
}
