import type { INodeProperties } from 'n8n-workflow';
import * as generate from './generate.operation';

export { generate };

export const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	displayOptions: { show: { resource: ['audit'] } },
	options: [
		{
			name: 'Generate',
			value: 'generate',
			action: 'Audit workflows for reliability',
			description:
				"The failure inventory, the reliability checklist and the findings of each workflow in the input (what n8n's own n8n node, Workflow > Get Many, outputs)",
		},
	],
	default: 'generate',
};

export const description: INodeProperties[] = [...generate.description];
