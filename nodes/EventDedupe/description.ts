import type { INodeProperties } from 'n8n-workflow';

/**
 * Outputs follow the operation: Claim routes to New and Duplicate, plus Stale when ordering is
 * on, and Invalid (items that failed validation, or with Continue On Fail items without a usable
 * event ID) unless invalid items fail the execution; the other operations have one output.
 */
export const outputsExpression = `={{
	($parameter.operation ?? 'claim') !== 'claim'
		? [{ type: 'main', displayName: 'Done' }]
		: [{ type: 'main', displayName: 'New' }, { type: 'main', displayName: 'Duplicate' }]
			.concat($parameter.checkOrder ? [{ type: 'main', displayName: 'Stale' }] : [])
			.concat($parameter.validate && $parameter.onInvalid === 'fail' ? [] : [{ type: 'main', displayName: 'Invalid' }])
}}`;

const claimOnly = { show: { operation: ['claim'] } };

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Claim',
				value: 'claim',
				action: 'Claim events',
				description: 'Route each event to New the first time its ID is seen, else to Duplicate',
			},
			{
				name: 'Complete',
				value: 'complete',
				action: 'Complete events',
				description: 'Mark claimed events done (claim mode "lease until complete")',
			},
			{
				name: 'Release',
				value: 'release',
				action: 'Release claims',
				description:
					'Free the claims of a failed execution, or of given events, so a redelivery is new again',
			},
			{
				name: 'Purge',
				value: 'purge',
				action: 'Purge expired events',
				description: 'Delete event IDs past their retention',
			},
		],
		default: 'claim',
	},
	{
		displayName: 'Event ID',
		name: 'eventId',
		type: 'string',
		required: true,
		default: '={{ $json.id }}',
		description:
			'The ID the sender gives the event; the same event delivered again carries the same ID',
		displayOptions: { show: { operation: ['claim', 'complete'] } },
	},
	{
		displayName: 'Claimed By Execution',
		name: 'claimedBy',
		type: 'string',
		default: '',
		placeholder: 'this execution',
		description:
			'The execution that claimed the events. Only its claims are completed: after another execution took a claim over, the old one completes nothing. Empty means this execution.',
		displayOptions: { show: { operation: ['complete'] } },
	},
	{
		displayName: 'Consumer',
		name: 'consumer',
		type: 'string',
		default: '',
		placeholder: 'this workflow',
		description:
			'Event IDs are unique per consumer. Empty means this workflow, so two workflows may each process the same event once.',
		displayOptions: { show: { operation: ['claim', 'complete', 'release', 'purge'] } },
	},
	{
		displayName: 'Claim Mode',
		name: 'claimMode',
		type: 'options',
		options: [
			{
				name: 'Done at Claim, Released on Failure',
				value: 'doneAtClaim',
				description:
					'The event counts as processed once claimed; the bundled error workflow (or Release) frees the claims of a failed execution',
			},
			{
				name: 'Lease Until Complete',
				value: 'leaseUntilComplete',
				description:
					'The claim holds for the lease; a Complete step marks it done; an expired lease (a crashed worker) is claimable again',
			},
		],
		default: 'doneAtClaim',
		displayOptions: claimOnly,
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 604800, numberPrecision: 0 },
		default: 600,
		description: 'How long a claim is held before another execution may take it over',
		displayOptions: { show: { operation: ['claim'], claimMode: ['leaseUntilComplete'] } },
	},
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 3650, numberPrecision: 0 },
		default: 30,
		description: 'How long an event ID is remembered; keep it longer than any sender retries',
		displayOptions: claimOnly,
	},
	{
		displayName: 'Check Order',
		name: 'checkOrder',
		type: 'boolean',
		default: false,
		description:
			'Whether to route events older than the last processed version of their entity to Stale',
		displayOptions: claimOnly,
	},
	{
		displayName: 'Entity Key',
		name: 'entityKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. the customer or order the event is about',
		description: 'The object the event is about; versions are compared per entity',
		displayOptions: { show: { operation: ['claim'], checkOrder: [true] } },
	},
	{
		displayName: 'Entity Version',
		name: 'entityVersion',
		type: 'string',
		default: '',
		placeholder: 'e.g. the updated_at of the object',
		description:
			"The object's own version or updated-at (a number or a date), not the time the event was sent",
		displayOptions: { show: { operation: ['claim'], checkOrder: [true] } },
	},
	{
		displayName: 'Validate',
		name: 'validate',
		type: 'boolean',
		default: false,
		description:
			'Whether to check required fields here, at the first step, so a schema change fails loudly',
		displayOptions: claimOnly,
	},
	{
		displayName: 'Required Fields',
		name: 'requiredFields',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		default: {},
		placeholder: 'Add Field',
		displayOptions: { show: { operation: ['claim'], validate: [true] } },
		options: [
			{
				displayName: 'Field',
				name: 'field',
				values: [
					{
						displayName: 'Path',
						name: 'path',
						type: 'string',
						default: '',
						placeholder: 'contact.email',
						description: 'Dot path into the item JSON',
					},
					{
						displayName: 'Type',
						name: 'type',
						type: 'options',
						options: [
							{ name: 'Any', value: 'any' },
							{ name: 'Array', value: 'array' },
							{ name: 'Boolean', value: 'boolean' },
							{ name: 'Number', value: 'number' },
							{ name: 'Object', value: 'object' },
							{ name: 'String', value: 'string' },
						],
						default: 'any',
					},
				],
			},
		],
	},
	{
		displayName: 'On Invalid',
		name: 'onInvalid',
		type: 'options',
		options: [
			{ name: 'Route to Invalid Output', value: 'route' },
			{ name: 'Fail the Execution', value: 'fail' },
		],
		default: 'route',
		displayOptions: { show: { operation: ['claim'], validate: [true] } },
	},
	{
		displayName: 'Release By',
		name: 'releaseBy',
		type: 'options',
		options: [
			{
				name: 'Execution ID',
				value: 'execution',
				description:
					'Every claim the execution made (the error workflow passes the failed execution)',
			},
			{ name: 'Event ID', value: 'event', description: 'The claims of the given events' },
		],
		default: 'execution',
		displayOptions: { show: { operation: ['release'] } },
	},
	{
		displayName: 'Execution ID',
		name: 'executionId',
		type: 'string',
		default: '={{ $json.execution?.id }}',
		description:
			'The execution whose claims to release; in an Error Trigger workflow, the failed execution',
		displayOptions: { show: { operation: ['release'], releaseBy: ['execution'] } },
	},
	{
		displayName: 'Event ID',
		name: 'releaseEventId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { operation: ['release'], releaseBy: ['event'] } },
	},
	{
		displayName: 'Purge Scope',
		name: 'purgeScope',
		type: 'options',
		options: [
			{ name: 'This Consumer', value: 'consumer' },
			{ name: 'All Consumers', value: 'all' },
		],
		default: 'consumer',
		displayOptions: { show: { operation: ['purge'] } },
	},
];
