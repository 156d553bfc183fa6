import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';

/** Console > Serve: the webhook request and the console's options. */
export const consoleProperties: INodeProperties[] = [
	{
		displayName: 'Request',
		name: 'request',
		type: 'json',
		default: '={{ $json }}',
		description:
			"The Webhook node's item: its headers (for the signed-in operator), query (the page) and body (the action)",
		displayOptions: { show: { resource: ['console'], operation: ['serve'] } },
	},
	{
		displayName: 'Options',
		name: 'consoleOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { resource: ['console'], operation: ['serve'] } },
		options: [
			{
				displayName: 'Chart Days',
				name: 'days',
				type: 'number',
				typeOptions: range(LIMITS.chartDays),
				default: 30,
				description: 'How many days the stats page charts',
			},
			{
				displayName: 'Operator Header',
				name: 'operatorHeader',
				type: 'string',
				default: '',
				placeholder: 'e.g. x-forwarded-user',
				description:
					'A header set by a signing-in proxy that names the operator; without it the Basic auth user name is the operator',
			},
			{
				displayName: 'Teams',
				name: 'teams',
				type: 'json',
				default: '',
				placeholder: '{"maria": ["sales-ops"], "ops-lead": ["*"]}',
				description:
					'Who may act on which items: operator → the teams they are in. An operator acts on the items whose owner is one of their teams (* for all) and on items without an owner; anyone not listed sees the console read-only. Empty: every signed-in operator may act on everything.',
			},
			{ displayName: 'Title', name: 'title', type: 'string', default: 'Reliability console' },
		],
	},
];
