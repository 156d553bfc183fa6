import type { INodeExecutionData } from 'n8n-workflow';
import { isReliabilityError } from '../../lib';

/** The output item of a failed input item under continue-on-fail: the error, what to do, the index. */
export function errorItem(error: unknown, itemIndex: number): INodeExecutionData {
	return {
		json: {
			error: error instanceof Error ? error.message : String(error),
			...(isReliabilityError(error) && error.hint ? { description: error.hint } : {}),
			itemIndex,
		},
		pairedItem: { item: itemIndex },
	};
}
