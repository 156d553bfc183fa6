import type { INodeProperties } from 'n8n-workflow';
import * as trace from './trace.operation';

export { trace };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['item'] } },
	options: [
		{
			name: 'Trace',
			value: 'trace',
			action: 'Trace an item by its business ID',
			description:
				'Where an item is: every claim, write step and dead letter of an event ID, idempotency key or a part of one, oldest first',
		},
	],
	default: 'trace',
};

export const description: INodeProperties[] = [...trace.description];
