import type { INodeProperties } from 'n8n-workflow';
import * as serve from './serve.operation';

export { serve };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['console'] } },
	options: [
		{
			name: 'Serve',
			value: 'serve',
			action: 'Serve a console page or action',
			description: 'Turn a webhook request into the console page (and perform its action)',
		},
	],
	default: 'serve',
};

export const description: INodeProperties[] = [...serve.description];
