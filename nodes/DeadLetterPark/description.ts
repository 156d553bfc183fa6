import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../lib';
import { range } from '../shared/range';

const show = (...operations: string[]) => ({ show: { operation: operations } });

const statusOptions = [
	{ name: 'Abandoned', value: 'abandoned' },
	{ name: 'Being Fixed', value: 'being_fixed' },
	{ name: 'Compensated', value: 'compensated' },
	{ name: 'Held', value: 'held' },
	{ name: 'New', value: 'new' },
	{ name: 'Replay Requested', value: 'replay_requested' },
	{ name: 'Replayed', value: 'replayed' },
	{ name: 'Resolved', value: 'resolved' },
];

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Compensate',
				value: 'compensate',
				action: 'Compensate a dead letter',
				description:
					'Reverse the steps the item had already taken, newest first, each compensating request sent once, with the answers in the audit trail',
			},
			{
				name: 'Get',
				value: 'get',
				action: 'Get dead letters',
				description: 'Get parked items by ID or idempotency key, with their audit history',
			},
			{
				name: 'List',
				value: 'list',
				action: 'List dead letters',
				description: 'Search parked items by status, workflow, step, reason, owner and age',
			},
			{
				name: 'Park',
				value: 'park',
				action: 'Park items',
				description: 'Store failed items with everything needed to fix and replay them',
			},
			{
				name: 'Purge',
				value: 'purge',
				action: 'Purge expired dead letters',
				description: 'Delete closed records past their retention',
			},
			{
				name: 'Replay',
				value: 'replay',
				action: 'Request a replay',
				description: 'Mark parked items replay requested and output their payloads to re-run',
			},
			{
				name: 'Stats',
				value: 'stats',
				action: 'Get dead letter stats',
				description: 'Parked per day, open by status, wait times, top reasons',
			},
			{
				name: 'Take for Replay',
				value: 'take',
				action: 'Take dead letters for replay',
				description:
					'Atomically take the items asked to be replayed (never one item for two runs) and output them with their payloads',
			},
			{
				name: 'Update Status',
				value: 'updateStatus',
				action: 'Update the status of a dead letter',
				description: 'Move a parked item to a new status, recording who and why',
			},
		],
		default: 'park',
	},

	// Park
	{
		displayName: 'Step',
		name: 'step',
		type: 'string',
		default: '',
		placeholder: 'the node this node is connected to',
		description:
			'The step the item failed at. Empty: the node whose output feeds this one (its error output, typically).',
		displayOptions: show('park'),
	},
	{
		displayName: 'Error Class',
		name: 'errorClass',
		type: 'options',
		options: [
			{
				name: 'Conflict',
				value: 'conflict',
			},
			{
				name: 'Detect From the Error',
				value: 'auto',
				description: '4xx is permanent, 408/425/429/5xx exhausted, anything else execution',
			},
			{
				name: 'Exhausted',
				value: 'exhausted',
			},
			{
				name: 'Invalid',
				value: 'invalid',
			},
			{
				name: 'Permanent',
				value: 'permanent',
			},
			{
				name: 'Rate Limited',
				value: 'rate_limited',
			},
			{
				name: 'Unknown Outcome',
				value: 'unknown_outcome',
			},
		],
		default: 'auto',
		displayOptions: show('park'),
	},
	{
		displayName: 'Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		description:
			'The key of the write that failed, so a replay is recognised as the same operation. Empty: the item is identified by its payload.',
		displayOptions: show('park'),
	},
	{
		displayName: 'Park Options',
		name: 'parkOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: show('park'),
		options: [
			{
				displayName: 'Already Happened',
				name: 'alreadyHappened',
				type: 'string',
				default: '',
				placeholder: 'e.g. enriched, not in CRM',
				description: 'What succeeded before the failure',
			},
			{
				displayName: 'Business Impact',
				name: 'impact',
				type: 'string',
				default: '',
				placeholder: 'e.g. lead not in CRM',
			},
			{
				displayName: 'Integration',
				name: 'integration',
				type: 'string',
				default: '',
				placeholder: 'e.g. crm',
				description: 'The system the step talks to. While it is paused, items are parked as held.',
			},
			{
				displayName: 'Mask Fields',
				name: 'maskFields',
				type: 'string',
				default: '',
				placeholder: 'e.g. apiKey, ssn',
				description:
					'Comma-separated field names to mask, in any spelling (ssn matches SSN and s-s-n), besides the secrets always masked: authorization, cookies, API keys, passwords, secrets and tokens',
			},
			{
				displayName: 'Owner',
				name: 'owner',
				type: 'string',
				default: '',
				placeholder: 'e.g. sales-ops',
				description: 'Who fixes items parked here',
			},
			{
				displayName: 'Retention (Days)',
				name: 'retentionDays',
				type: 'number',
				typeOptions: range(LIMITS.retentionDays),
				default: 90,
				description: 'How long a closed record is kept after it was parked',
			},
			{
				displayName: 'Severity',
				name: 'severity',
				type: 'options',
				options: [
					{ name: 'Page Now', value: 'page', description: 'Money or customer-facing' },
					{ name: 'Normal', value: 'normal', description: 'Goes into the daily digest' },
				],
				default: 'normal',
			},
			{
				displayName: 'Source Version',
				name: 'sourceVersion',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.versionId }}',
				description:
					"The failed workflow's version, when you know it (n8n does not tell nodes their workflow's version ID). Empty: a fingerprint of the nodes connected to this one, when the item failed in this workflow.",
			},
		],
	},

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
