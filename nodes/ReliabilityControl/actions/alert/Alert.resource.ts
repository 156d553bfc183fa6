import type { INodeProperties } from 'n8n-workflow';
import * as compose from './compose.operation';

export { compose };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['alert'] } },
	options: [
		{
			name: 'Compose',
			value: 'compose',
			action: 'Compose an outcome alert',
			description:
				'One alert per item: workflow, item and impact first, then why, what already happened, the run link and the next action, secrets masked',
		},
	],
	default: 'compose',
};

export const description: INodeProperties[] = [...compose.description];
