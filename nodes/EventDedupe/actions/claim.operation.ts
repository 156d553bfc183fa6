import {
	type IDisplayOptions,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { claimEvents, ClaimMode, ClaimOutcome, LIMITS, type Store } from '../../../lib';
import { consumerName } from '../../shared/consumer';
import { range } from '../../shared/range';
import { claimOutputs, warnNoExecutionEnd, warnOverCap } from './claimOutputs';
import { claimRequestsOf } from './claimRequests';
import { claimSettingsOf } from './claimSettings';
import { callersOf, holdUntilExecutionEnds } from '../../shared/executionEnd';
import { eventIdRetention, maskFieldsOption } from '../../shared/descriptions';

/** Claim Mode, with a default per node version (version 1 keeps "done at claim"). */
const claimMode = (defaultMode: ClaimMode, displayOptions: IDisplayOptions): INodeProperties => ({
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
	default: defaultMode,
	displayOptions,
});

const properties: INodeProperties[] = [
	claimMode(ClaimMode.doneAtClaim, { show: { '@version': [1] } }),
	claimMode(ClaimMode.untilExecutionEnds, { hide: { '@version': [1] } }),
	{
		displayName: 'Recover After (Seconds)',
		name: 'recoverAfterSeconds',
		type: 'number',
		typeOptions: range(LIMITS.recoverAfterSeconds),
		default: 60,
		description:
			'How soon a claim whose n8n process died may be recovered: the process renews it every third of this while the execution runs',
		displayOptions: { show: { claimMode: ['untilExecutionEnds'] } },
	},
	{
		displayName: 'Inbox Options',
		name: 'inbox',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { claimMode: ['untilExecutionEnds'] } },
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
			maskFieldsOption(
				'e.g. iban, birthDate',
				'Field names masked in the kept item, besides the usual secret names (authorization, cookie, password, token, API key and their spellings)',
			),
		],
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: range(LIMITS.claimLeaseSeconds),
		default: 600,
		description: 'How long a claim is held before another execution may take it over',
		displayOptions: { show: { claimMode: ['leaseUntilComplete'] } },
	},
	eventIdRetention,
	{
		displayName: 'Check Order',
		name: 'checkOrder',
		type: 'boolean',
		default: false,
		description:
			'Whether to route events older than the last processed version of their entity to Stale',
	},
	{
		displayName: 'Entity Key',
		name: 'entityKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. the customer or order the event is about',
		description: 'The object the event is about; versions are compared per entity',
		displayOptions: { show: { checkOrder: [true] } },
	},
	{
		displayName: 'Entity Version',
		name: 'entityVersion',
		type: 'string',
		default: '',
		placeholder: 'e.g. the updated_at of the object',
		description:
			"The object's own version or updated-at (a number or a date), not the time the event was sent",
		displayOptions: { show: { checkOrder: [true] } },
	},
	{
		displayName: 'Validate',
		name: 'validate',
		type: 'boolean',
		default: false,
		description:
			'Whether to check required fields here, at the first step, so a schema change fails loudly',
	},
	{
		displayName: 'Required Fields',
		name: 'requiredFields',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		default: {},
		placeholder: 'Add Field',
		displayOptions: { show: { validate: [true] } },
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
		displayOptions: { show: { validate: [true] } },
	},
];

export const description = updateDisplayOptions({ show: { operation: ['claim'] } }, properties);

/**
 * Claim: reads every item's event ID (and entity version, and validates it), claims the whole
 * run in one batched statement, and routes each item to New, Duplicate, Stale or Invalid. An
 * item that cannot be claimed (no usable event ID or version) is never New: it fails the run,
 * or with Continue On Fail goes to Invalid with the reason.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const settings = claimSettingsOf(this);
	const { requests, invalid, overCap } = await claimRequestsOf(this, items, settings);
	const results = await claimEvents(
		store,
		{
			consumer: consumerName(this),
			workflowId: this.getWorkflow().id,
			executionId: this.getExecutionId(),
			mode: settings.mode,
			leaseSeconds: settings.leaseSeconds,
			retentionDays: settings.retentionDays,
			ancestors: settings.inbox ? callersOf(this) : [],
		},
		requests,
	);
	if (settings.inbox && results.some((r) => r.outcome === ClaimOutcome.new)) {
		if (!holdUntilExecutionEnds(this, store, settings.leaseSeconds)) warnNoExecutionEnd(this);
	}
	if (overCap > 0) warnOverCap(this, overCap);
	return claimOutputs(items, results, invalid, settings);
}
