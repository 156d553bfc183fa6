import type { INodeProperties } from 'n8n-workflow';
import * as compose from './compose.operation';
import * as listIssues from './listIssues.operation';
import * as notify from './notify.operation';
import * as sweep from './sweep.operation';

export { compose, listIssues, notify, sweep };

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
		{
			name: 'List Issues',
			value: 'listIssues',
			action: 'List open alert issues',
			description: 'The open issues: items parked for the same cause, with their counts',
		},
		{
			name: 'Notify',
			value: 'notify',
			action: 'Notify by cause impact and hours',
			description:
				"Group parked items by cause into issues: the first alerts, later ones update its count; pages money and customer-facing impact, sends the rest to the owner's channel in working hours or to the digest",
		},
		{
			name: 'Sweep',
			value: 'sweep',
			action: 'Resolve and update alert issues',
			description:
				'Resolve the issues whose items are all closed, send the updates that waited, summarize what the ceiling held back',
		},
	],
	default: 'compose',
};

export const description: INodeProperties[] = [
	...compose.description,
	...notify.description,
	...sweep.description,
	...listIssues.description,
];
