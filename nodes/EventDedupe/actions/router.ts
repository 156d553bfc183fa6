import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { routeOperation } from '../../shared/router';
import * as claim from './claim.operation';
import * as complete from './complete.operation';
import * as failExecution from './failExecution.operation';
import * as purge from './purge.operation';
import * as recover from './recover.operation';
import * as release from './release.operation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, { claim, complete, release, purge, recover, failExecution });
}
