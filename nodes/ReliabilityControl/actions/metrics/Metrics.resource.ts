import type { INodeProperties } from 'n8n-workflow';
import * as prometheus from './prometheus.operation';

export { prometheus };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['metrics'] } },
	options: [
		{
			name: 'Prometheus',
			value: 'prometheus',
			action: 'Output metrics in prometheus text format',
			description:
				'Open dead letters, oldest age, parks per day, held items, pauses and heartbeats',
		},
	],
	default: 'prometheus',
};

export const description: INodeProperties[] = [...prometheus.description];
