import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { storeFor } from '../../shared/store';
import * as claim from './claim.operation';
import * as complete from './complete.operation';
import * as purge from './purge.operation';
import * as release from './release.operation';

const operations = { claim, complete, release, purge } as const;

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = this.getNodeParameter('operation', 0) as keyof typeof operations;
	const handler = operations[operation];
	if (!handler) throw new NodeOperationError(this.getNode(), `The operation "${operation}" is not supported`);
	const store = await storeFor(this);
	return await handler.execute.call(this, store, this.getInputData());
}
