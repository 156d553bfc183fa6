import type { IExecuteFunctions } from 'n8n-workflow';
import { ItemError } from '../../../lib';

/** The consumer name of a run: the parameter, or this workflow's ID when it is left empty. */
export function consumerName(context: IExecuteFunctions, itemIndex = 0): string {
	const value = String(context.getNodeParameter('consumer', itemIndex, '') ?? '').trim();
	return value || `workflow:${context.getWorkflow().id ?? 'unsaved'}`;
}

/** Reads a required string parameter of one item; an empty value is a clear error naming the item. */
export function requiredText(context: IExecuteFunctions, name: string, label: string, itemIndex: number, hint: string): string {
	const value = context.getNodeParameter(name, itemIndex, '') as unknown;
	const text = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value).trim();
	if (!text) throw new ItemError(`Item ${itemIndex} has no ${label}`, itemIndex, hint);
	return text;
}
