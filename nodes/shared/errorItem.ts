import { ExecutionBaseError, type INodeExecutionData } from 'n8n-workflow';
import { isReliabilityError } from '../../lib';

/** What an error says to do: an engine error's hint, or the description of one of n8n's errors. */
const descriptionOf = (error: unknown): string | undefined =>
	isReliabilityError(error)
		? error.hint
		: error instanceof ExecutionBaseError
			? (error.description ?? undefined)
			: undefined;

/** The output item of a failed input item under continue-on-fail: the error, what to do, the index. */
export function errorItem(error: unknown, itemIndex: number): INodeExecutionData {
	const description = descriptionOf(error);
	return {
		json: {
			error: error instanceof Error ? error.message : String(error),
			...(description ? { description } : {}),
			itemIndex,
		},
		pairedItem: { item: itemIndex },
	};
}
