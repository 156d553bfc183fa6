import type { IExecuteFunctions } from 'n8n-workflow';
import { ItemError } from '../../../lib';
import type { ItemValueReader } from '../../shared/itemValues';

/** The consumer name of a run: the parameter, or this workflow's ID when it is left empty. */
export function consumerName(context: IExecuteFunctions, itemIndex = 0): string {
	const value = String(context.getNodeParameter('consumer', itemIndex, '') ?? '').trim();
	return value || `workflow:${context.getWorkflow().id ?? 'unsaved'}`;
}

/** A required per-item value as text; empty is a clear error naming the item. */
export function requiredText(read: ItemValueReader, label: string, itemIndex: number, hint: string): string {
	const value = read(itemIndex);
	const text = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value).trim();
	if (!text) throw new ItemError(`Item ${itemIndex} has no ${label}`, itemIndex, hint);
	return text;
}
