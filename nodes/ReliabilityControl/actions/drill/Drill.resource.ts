import type { INodeProperties } from 'n8n-workflow';
import * as run from './run.operation';

export { run };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['drill'] } },
	options: [
		{
			name: 'Run',
			value: 'run',
			action: 'Run the fire drill on a webhook workflow',
			description:
				'Duplicate delivery, a forced timeout after commit, a forced validation error and a replay, each reported passed or failed with the reason',
		},
	],
	default: 'run',
};

export const description: INodeProperties[] = [...run.description];
