import type { INodeProperties } from 'n8n-workflow';
import { show, statusOptions } from './shared';

/** Get, Update Status and Replay: which record, and what to change. */
export const recordProperties: INodeProperties[] = [
	// Get, Update Status, Replay
	{
		displayName: 'Find By',
		name: 'findBy',
		type: 'options',
		options: [
			{ name: 'Dead Letter ID', value: 'id' },
			{ name: 'Idempotency Key', value: 'idempotencyKey' },
		],
		default: 'id',
		displayOptions: show('get'),
	},
	{
		displayName: 'Dead Letter ID',
		name: 'deadLetterId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { operation: ['get'], findBy: ['id'] } },
	},
	{
		displayName: 'Idempotency Key',
		name: 'lookupKey',
		type: 'string',
		default: '',
		displayOptions: { show: { operation: ['get'], findBy: ['idempotencyKey'] } },
	},
	{
		displayName: 'Dead Letter ID',
		name: 'targetId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: show('updateStatus', 'replay', 'compensate'),
	},
	{
		displayName: 'New Status',
		name: 'newStatus',
		type: 'options',
		options: statusOptions,
		default: 'being_fixed',
		displayOptions: show('updateStatus'),
	},
	{
		displayName: 'Actor',
		name: 'actor',
		type: 'string',
		default: '',
		placeholder: 'e.g. maria@example.com',
		description: 'Who makes the change; recorded in the audit trail. Required.',
		displayOptions: show('updateStatus', 'replay', 'compensate'),
	},
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		description: 'Why; required to resolve or abandon',
		displayOptions: show('updateStatus', 'replay', 'compensate'),
	},

	{
		displayName: 'Expected Generation',
		name: 'expectedGeneration',
		type: 'string',
		default: '',
		placeholder: "e.g. {{ $('Take for Replay').item.json.generation }}",
		description:
			'Only change the record while it is still at this generation (the one Take for Replay output): a run that took it and was overtaken changes nothing. Empty: any generation.',
		displayOptions: show('updateStatus'),
	},
];
