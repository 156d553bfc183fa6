import type { IExecuteFunctions } from 'n8n-workflow';

/** The consumer name of a run: the parameter, or this workflow's ID when it is left empty. */
export function consumerName(context: IExecuteFunctions, itemIndex = 0): string {
	const value = String(context.getNodeParameter('consumer', itemIndex, '') ?? '').trim();
	return value || `workflow:${context.getWorkflow().id ?? 'unsaved'}`;
}
