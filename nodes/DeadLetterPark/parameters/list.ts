import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';
import { show, statusOptions } from './shared';

/** List: which records. */
export const listProperties: INodeProperties[] = [
	// List
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		displayOptions: show('list'),
		options: [
			{ displayName: 'Error Class', name: 'errorClass', type: 'string', default: '' },
			{ displayName: 'Integration', name: 'integration', type: 'string', default: '' },
			{
				displayName: 'Older Than (Minutes)',
				name: 'olderThanMinutes',
				type: 'number',
				typeOptions: range(LIMITS.olderThanMinutes),
				default: 0,
			},
			{ displayName: 'Owner', name: 'owner', type: 'string', default: '' },
			{ displayName: 'Reason Contains', name: 'search', type: 'string', default: '' },
			{
				displayName: 'Statuses',
				name: 'statuses',
				type: 'multiOptions',
				options: statusOptions,
				default: [],
			},
			{ displayName: 'Step', name: 'step', type: 'string', default: '' },
			{ displayName: 'Workflow ID', name: 'workflowId', type: 'string', default: '' },
		],
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: {
			minValue: LIMITS.listLimit.min,
			maxValue: LIMITS.listLimit.max,
			numberPrecision: 0,
		},
		default: 50,
		description: 'Max number of results to return',
		displayOptions: show('list'),
	},
];
