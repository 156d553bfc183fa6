import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { storeFor } from '../../shared/store';
import * as get from './get.operation';
import * as list from './list.operation';
import * as park from './park.operation';
import * as purge from './purge.operation';
import * as replay from './replay.operation';
import * as stats from './stats.operation';
import * as updateStatus from './updateStatus.operation';

const operations = { park, get, list, updateStatus, replay, stats, purge } as const;

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = this.getNodeParameter('operation', 0) as keyof typeof operations;
	const handler = operations[operation];
	if (!handler) throw new NodeOperationError(this.getNode(), `The operation "${operation}" is not supported`);
	const store = await storeFor(this);
	return await handler.execute.call(this, store, this.getInputData());
}
