import type { INodeProperties } from 'n8n-workflow';
import * as beat from './beat.operation';
import * as check from './check.operation';

export { beat, check };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['heartbeat'] } },
	options: [
		{
			name: 'Beat',
			value: 'beat',
			action: 'Record a heartbeat',
			description: 'Say that this scheduled workflow ran',
		},
		{
			name: 'Check',
			value: 'check',
			action: 'Check heartbeats',
			description: 'Output heartbeats that became late or down, and recoveries, once each',
		},
	],
	default: 'beat',
};

export const description: INodeProperties[] = [...beat.description, ...check.description];
