import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../lib';
import { range } from '../shared/range';

/**
 * Outputs follow the operation: Claim routes to New and Duplicate, plus Stale when ordering is
 * on, and Invalid (items that failed validation, or with Continue On Fail items without a usable
 * event ID) unless invalid items fail the execution; Recover Crashed to Re-run and Give Up;
 * Settle Failed Execution to Parked and Not Kept; the other operations have one output.
 */
export const outputsExpression = `={{
	($parameter.operation ?? 'claim') === 'recover'
		? [{ type: 'main', displayName: 'Re-run' }, { type: 'main', displayName: 'Give Up' }]
		: $parameter.operation === 'failExecution'
		? [{ type: 'main', displayName: 'Parked' }, { type: 'main', displayName: 'Not Kept' }]
		: ($parameter.operation ?? 'claim') !== 'claim'
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
				name: 'Purge',
				value: 'purge',
				action: 'Purge expired events',
				description: 'Delete event IDs past their retention',
			},
			{
				name: 'Recover Crashed',
				value: 'recover',
				action: 'Recover items of crashed executions',
				description:
					'Take the items whose execution died (kept in the inbox) to run them again, or give them up to be parked',
			},
			{
				name: 'Release',
				value: 'release',
				action: 'Release claims',
				description:
					'Free the claims of a failed execution, or of given events, so a redelivery is new again',
			},
			{
				name: 'Settle Failed Execution',
				value: 'failExecution',
				action: 'Settle a failed execution',
				description:
					"For an error workflow: mark a failed or crashed execution's open writes and claims, and output its items to park",
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
				name: 'Until the Execution Ends',
				value: 'untilExecutionEnds',
				description:
					'The claim keeps the item and holds while the execution runs: done when it succeeds, failed (a redelivery is new) when it fails; when n8n dies mid-run, the Recover workflow runs the item again',
			},
			{
				name: 'Done at Claim, Released on Failure',
				value: 'doneAtClaim',
				description:
					'The event counts as processed once claimed; the bundled error workflow (or Release) frees the claims of a failed execution. A crash after n8n answered the sender loses the event.',
			},
			{
				name: 'Lease Until Complete',
				value: 'leaseUntilComplete',
				description:
					'The claim holds for the lease; a Complete step marks it done; an expired lease (a crashed worker) is claimable again by a redelivery',
			},
		],
		default: 'doneAtClaim',
		displayOptions: { show: { operation: ['claim'], '@version': [1] } },
	},
	{
		displayName: 'Claim Mode',
		name: 'claimMode',
		type: 'options',
		options: [
			{
				name: 'Until the Execution Ends',
				value: 'untilExecutionEnds',
				description:
					'The claim keeps the item and holds while the execution runs: done when it succeeds, failed (a redelivery is new) when it fails; when n8n dies mid-run, the Recover workflow runs the item again',
			},
			{
				name: 'Done at Claim, Released on Failure',
				value: 'doneAtClaim',
				description:
					'The event counts as processed once claimed; the bundled error workflow (or Release) frees the claims of a failed execution. A crash after n8n answered the sender loses the event.',
			},
			{
				name: 'Lease Until Complete',
				value: 'leaseUntilComplete',
				description:
					'The claim holds for the lease; a Complete step marks it done; an expired lease (a crashed worker) is claimable again by a redelivery',
			},
		],
		default: 'untilExecutionEnds',
		displayOptions: { show: { operation: ['claim'] }, hide: { '@version': [1] } },
	},
	{
		displayName: 'Recover After (Seconds)',
		name: 'recoverAfterSeconds',
		type: 'number',
		typeOptions: range(LIMITS.recoverAfterSeconds),
		default: 60,
		description:
			'How soon a claim whose n8n process died may be recovered: the process renews it every third of this while the execution runs',
		displayOptions: { show: { operation: ['claim'], claimMode: ['untilExecutionEnds'] } },
	},
	{
		displayName: 'Inbox Options',
		name: 'inbox',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { operation: ['claim'], claimMode: ['untilExecutionEnds'] } },
		options: [
			{
				displayName: 'Largest Item (KB)',
				name: 'maxItemKb',
				type: 'number',
				typeOptions: range(LIMITS.inboxMaxItemKb),
				default: 256,
				description:
					'Items over this size are not kept with their claim (the execution says so in a hint); a crash then parks the event without its item',
			},
			{
				displayName: 'Mask Fields',
				name: 'maskFields',
				type: 'string',
				default: '',
				placeholder: 'e.g. iban, birthDate',
				description:
					'Field names masked in the kept item, besides the usual secret names (authorization, cookie, password, token, API key and their spellings)',
			},
		],
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: range(LIMITS.claimLeaseSeconds),
		default: 600,
		description: 'How long a claim is held before another execution may take it over',
		displayOptions: { show: { operation: ['claim'], claimMode: ['leaseUntilComplete'] } },
	},
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: range(LIMITS.retentionDays),
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

	// Recover Crashed
	{
		displayName: 'Max Recoveries',
		name: 'maxRecoveries',
		type: 'number',
		typeOptions: range(LIMITS.maxRecoveries),
		default: 3,
		description:
			'How many times an item is run again before it is given up to be parked as crashed',
		displayOptions: { show: { operation: ['recover'] } },
	},
	{
		displayName: 'Limit',
		name: 'recoverLimit',
		type: 'number',
		typeOptions: range(LIMITS.listLimit),
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { operation: ['recover'] } },
	},
	{
		displayName: 'Hold For (Seconds)',
		name: 'recoverHoldSeconds',
		type: 'number',
		typeOptions: range(LIMITS.claimLeaseSeconds),
		default: 600,
		description:
			'How long this recovery run holds the items it takes; one it never completes is taken again after this',
		displayOptions: { show: { operation: ['recover'] } },
	},
	{
		displayName: 'Workflow ID',
		name: 'recoverWorkflowId',
		type: 'string',
		default: '',
		description: 'Only items of this workflow; empty for all',
		displayOptions: { show: { operation: ['recover'] } },
	},

	// Settle Failed Execution
	{
		displayName: 'Failed Execution ID',
		name: 'failedExecutionId',
		type: 'string',
		default: '={{ $json.execution?.id }}',
		description:
			'The execution that failed; in an Error Trigger workflow, {{ $JSON.execution.ID }}',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Crashed',
		name: 'crashed',
		type: 'boolean',
		default: false,
		description:
			'Whether the execution crashed (n8n died mid-run) rather than failed: its items are then left to the Recover workflow to run again, instead of being parked. The bundled Error handler sets it from the error n8n reports for a crash ("Workflow did not finish").',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Error Message',
		name: 'failureMessage',
		type: 'string',
		default: '={{ $json.execution?.error?.message }}',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Failed Workflow ID',
		name: 'failedWorkflowId',
		type: 'string',
		default: '={{ $json.workflow?.id }}',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Failed Workflow Name',
		name: 'failedWorkflowName',
		type: 'string',
		default: '={{ $json.workflow?.name }}',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Failed Node',
		name: 'failedNode',
		type: 'string',
		default: '={{ $json.execution?.lastNodeExecuted }}',
		description: 'The last node that ran: the step the parked items failed at',
		displayOptions: { show: { operation: ['failExecution'] } },
	},
	{
		displayName: 'Park Options',
		name: 'failOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { operation: ['failExecution'] } },
		options: [
			{ displayName: 'Business Impact', name: 'impact', type: 'string', default: '' },
			{ displayName: 'Owner', name: 'owner', type: 'string', default: '' },
			{ displayName: 'Severity', name: 'severity', type: 'string', default: '' },
		],
	},
];
