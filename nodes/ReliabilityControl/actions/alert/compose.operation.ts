import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { composeAlert, isHeld, parseMaskFields } from '../../../../lib';
import { toNodeError } from '../../../shared/store';
import { errorItem } from '../../../shared/errorItem';
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
	const out: INodeExecutionData[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			if (isHeld(items[index].json)) continue;
			const maskFields = parseMaskFields(this.getNodeParameter('alertMaskFields', index, ''));
			const alert = composeAlert(items[index].json, { maskFields });
			out.push({ json: alert as unknown as IDataObject, pairedItem: { item: index } });
		} catch (error) {
			if (!this.continueOnFail()) throw toNodeError(this, error, index);
			out.push(errorItem(error, index));
		}
	}
	return [out];
}
