import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';
import { show } from './shared';

/** Stats: over how many days. */
export const statsProperties: INodeProperties[] = [
	// Stats
	{
		displayName: 'Days',
		name: 'days',
		type: 'number',
		typeOptions: range(LIMITS.statsDays),
		default: 30,
		description: 'How many days of parking to count (open items count whatever their age)',
		displayOptions: show('stats'),
	},
	{
		displayName: 'Workflow ID',
		name: 'statsWorkflowId',
		type: 'string',
		default: '',
		description: 'Only this workflow; empty for all',
		displayOptions: show('stats'),
	},
];
