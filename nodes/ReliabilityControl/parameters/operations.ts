import type { INodeProperties } from 'n8n-workflow';

/** The operation of each resource (and the alert's masked fields). */
export const operationsProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['pause'] } },
		options: [
			{
				name: 'Check',
				value: 'check',
				action: 'Check whether paused',
				description: 'Route items to Running or Paused',
			},
			{
				name: 'List',
				value: 'list',
				action: 'List pauses',
				description: 'Every integration and workflow that was paused, and its state',
			},
			{
				name: 'Pause',
				value: 'pause',
				action: 'Pause an integration or workflow',
				description: 'Stop calling it; its failed items are held, out of the review queue',
			},
			{
				name: 'Resume',
				value: 'resume',
				action: 'Resume an integration or workflow',
				description: 'Resume it; held items move to replay requested',
			},
		],
		default: 'pause',
	},
	{
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
	},
	{
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
	},
	{
		displayName: 'Mask Fields',
		name: 'alertMaskFields',
		type: 'string',
		default: '',
		placeholder: 'e.g. ssn, iban',
		description:
			'Comma-separated field names to mask in the alert text, besides the secrets always masked: authorization, cookies, API keys, passwords, secrets and tokens',
		displayOptions: { show: { resource: ['alert'], operation: ['compose'] } },
	},
	{
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
	},
	{
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
	},
];
