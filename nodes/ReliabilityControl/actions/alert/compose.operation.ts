import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { composeAlert, isHeld, parseMaskFields } from '../../../../lib';
import { outputOfEachItem } from '../../../shared/router';
import { alertMaskFields } from '../../../shared/descriptions';

const properties: INodeProperties[] = [alertMaskFields];

export const description = updateDisplayOptions(
	{ show: { resource: ['alert'], operation: ['compose'] } },
	properties,
);

/**
 * Compose: one alert per input item, its text masked; held items (a paused integration, an open
 * breaker) make no alert. Needs no store.
 */
export async function execute(
	this: IExecuteFunctions,
	_store: unknown,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return [
		await outputOfEachItem(this, items, (index) => {
			if (isHeld(items[index].json)) return undefined;
			const maskFields = parseMaskFields(this.getNodeParameter('alertMaskFields', index, ''));
			const alert = composeAlert(items[index].json, { maskFields });
			return { json: alert as unknown as IDataObject, pairedItem: { item: index } };
		}),
	];
}
