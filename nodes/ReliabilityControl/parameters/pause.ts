import type { INodeProperties } from 'n8n-workflow';

const pauseOps = (...operations: string[]) => ({
	show: { resource: ['pause'], operation: operations },
});

/** Pause: what to pause or resume, by whom and why. */
export const pauseProperties: INodeProperties[] = [
	{
		displayName: 'Scope',
		name: 'scope',
		type: 'options',
		options: [
			{
				name: 'Integration',
				value: 'integration',
				description: 'A system the workflows call, e.g. crm',
			},
			{ name: 'Workflow', value: 'workflow' },
		],
		default: 'integration',
		displayOptions: pauseOps('pause', 'resume', 'check'),
	},
	{
		displayName: 'Name',
		name: 'pauseName',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description: 'The integration (as Dead Letter Park and the write node name it) or the workflow',
		displayOptions: pauseOps('pause', 'resume', 'check'),
	},
	{
		displayName: 'Actor',
		name: 'actor',
		type: 'string',
		default: '',
		placeholder: 'e.g. maria@example.com',
		description: 'Who pauses or resumes; recorded. Required.',
		displayOptions: pauseOps('pause', 'resume'),
	},
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		description: 'Why; required to pause',
		displayOptions: pauseOps('pause', 'resume'),
	},
];
