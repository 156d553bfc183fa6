import type { INodeProperties } from 'n8n-workflow';
import * as installWorkflows from './installWorkflows.operation';

export { installWorkflows };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['setup'] } },
	options: [
		{
			name: 'Install Bundled Workflows',
			value: 'installWorkflows',
			action: 'Install the bundled workflows',
			description:
				"Create or update every bundled workflow through n8n's API, wired to each other and to this node's Reliability Store credential, and publish them in order",
		},
	],
	default: 'installWorkflows',
};

export const description: INodeProperties[] = [...installWorkflows.description];
