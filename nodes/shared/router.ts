import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { Store } from '../../lib';
import { storeFor } from './store';

/** An operation module: `execute` gets the run's store (opened and migrated) and its items. */
export interface Operation {
	execute(
		this: IExecuteFunctions,
		store: Store,
		items: INodeExecutionData[],
	): Promise<INodeExecutionData[][]>;
}

/** Picks the operation named by the `operation` parameter and runs it with the node's store. */
export async function routeOperation(
	context: IExecuteFunctions,
	operations: Record<string, Operation>,
): Promise<INodeExecutionData[][]> {
	const operation = context.getNodeParameter('operation', 0) as string;
	const handler = operations[operation];
	if (!handler)
		throw new NodeOperationError(
			context.getNode(),
			`The operation "${operation}" is not supported`,
		);
	const store = await storeFor(context);
	return await handler.execute.call(context, store, context.getInputData());
}
