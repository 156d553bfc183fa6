import type { INodeProperties } from 'n8n-workflow';
import * as check from './check.operation';
import * as list from './list.operation';
import * as pause from './pause.operation';
import * as resume from './resume.operation';

export { check, list, pause, resume };

export const operation: INodeProperties = {
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
};

const pauseOps = (...operations: string[]) => ({
	show: { resource: ['pause'], operation: operations },
});

/**
 * What to pause or resume, by whom and why: Pause, Resume and Check read the same scope and
 * name, Pause and Resume the same actor and reason, so each is declared once, here.
 */
export const description: INodeProperties[] = [
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
	...pause.description,
	...resume.description,
	...check.description,
	...list.description,
];
