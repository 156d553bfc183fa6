import type { INodeProperties } from 'n8n-workflow';
import { show } from './shared';

/** Take for Replay: how many records one run takes. */
export const takeProperties: INodeProperties[] = [
	// Take for Replay
	{
		displayName: 'Taker',
		name: 'taker',
		type: 'string',
		default: 'replay workflow',
		description: 'Who takes the records; recorded in the audit trail with this execution',
		displayOptions: show('take'),
	},
	{
		displayName: 'Limit',
		name: 'takeLimit',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 10000, numberPrecision: 0 },
		default: 100,
		description: 'Max number of results to return',
		displayOptions: show('take'),
	},
	{
		displayName: 'Workflow ID',
		name: 'takeWorkflowId',
		type: 'string',
		default: '',
		description: 'Only records of this workflow; empty for all',
		displayOptions: show('take'),
	},
	{
		displayName: 'Retake After (Minutes)',
		name: 'staleAfterMinutes',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 10080, numberPrecision: 0 },
		default: 30,
		description:
			'A record another replay run took this long ago without finishing (that run died) is taken again',
		displayOptions: show('take'),
	},
];
