import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { routeOperation } from '../../shared/router';
import * as compensate from './compensate.operation';
import * as get from './get.operation';
import * as list from './list.operation';
import * as park from './park.operation';
import * as purge from './purge.operation';
import * as replay from './replay.operation';
import * as stats from './stats.operation';
import * as take from './take.operation';
import * as updateStatus from './updateStatus.operation';

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await routeOperation(this, {
		park,
		get,
		list,
		updateStatus,
		replay,
		take,
		stats,
		purge,
		compensate,
	});
}
