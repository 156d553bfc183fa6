import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { routeOperation } from '../../shared/router';
import * as complete from './complete.operation';
import * as fail from './fail.operation';
import * as purge from './purge.operation';
import * as take from './take.operation';
import * as write from './write.operation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, { write, take, complete, fail, purge });
}
