import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';
import { alreadyHappened, businessImpact, parkOwner } from '../../shared/descriptions';

/** What happens to unknown outcomes and failures, and what the Success output carries. */
export const outcomesProperties: INodeProperties[] = [
	{
		displayName: 'On Unknown Outcome',
		name: 'onUnknown',
		type: 'options',
		options: [
			{
				name: 'Automatic',
				value: 'auto',
				description: 'Retry with the same key when the key is sent, else park for review',
			},
			{ name: 'Park for Review', value: 'park' },
			{
				name: 'Reconcile by Lookup',
				value: 'lookup',
				description:
					'Ask the target whether the effect exists (GET the lookup URL: 2xx exists, 404 absent, else conflict)',
			},
			{
				name: 'Retry With the Same Key',
				value: 'retry',
				description: 'Safe when the target honours idempotency keys',
			},
		],
		default: 'auto',
		description: 'A lost response or an expired lease means the effect may or may not exist',
	},
	{
		displayName: 'Lookup URL',
		name: 'lookupUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://api.example.com/contacts?externalId={{ $json.ID }}',
		displayOptions: { show: { onUnknown: ['lookup'] } },
	},
	{
		displayName: 'Target Commit Horizon (Seconds)',
		name: 'commitHorizonSeconds',
		type: 'number',
		typeOptions: { ...range(LIMITS.commitHorizonSeconds), numberPrecision: 1 },
		default: 2,
		description:
			"How long after a request's timeout the target may still commit it. The lookup waits this out after the last attempt and resends only if it then finds nothing. A target that may commit later than this can get a second effect: choose Park for Review for it.",
		displayOptions: { show: { onUnknown: ['lookup'] } },
	},
	{
		displayName: 'On Failure',
		name: 'onFailure',
		type: 'options',
		options: [
			{ name: 'Park and Route to Failed', value: 'parkAndRoute' },
			{
				name: 'Park and Fail the Execution',
				value: 'parkAndFail',
				description: "So n8n's error workflow runs",
			},
			{ name: 'Route to Failed Only', value: 'route' },
		],
		default: 'parkAndRoute',
	},
	{
		displayName: 'Park Items If the Execution Is Stopped',
		name: 'parkIfStopped',
		type: 'boolean',
		default: true,
		description:
			'Whether to park the failed items when the execution is stopped during the write (the Stop button, the API, a workflow timeout, a worker shutting down): n8n then runs no output of this node, so the Failed route never sees them. Turn off only when the items come from a queue that sends them again itself, as the bundled Outbox relay does.',
		displayOptions: { show: { onFailure: ['route'] } },
	},
	{
		displayName: 'Park Options',
		name: 'parkOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { onFailure: ['parkAndRoute', 'parkAndFail'] } },
		options: [alreadyHappened, businessImpact(), parkOwner()],
	},
	{
		displayName: 'Compensation',
		name: 'compensation',
		type: 'options',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'Request',
				value: 'request',
				description: "A request that reverses this step, filled in from the step's saved response",
			},
			{
				name: 'Manual Repair Plan',
				value: 'manual',
				description: 'What a person does to reverse this step, shown as a checklist',
			},
		],
		default: 'none',
		description:
			"How Dead Letter Park's Compensate reverses this step when a later step of the same item is parked",
	},
	{
		displayName: 'Compensation Method',
		name: 'compensationMethod',
		type: 'options',
		options: [
			{ name: 'DELETE', value: 'DELETE' },
			{ name: 'PATCH', value: 'PATCH' },
			{ name: 'POST', value: 'POST' },
			{ name: 'PUT', value: 'PUT' },
		],
		default: 'DELETE',
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Compensation URL',
		name: 'compensationUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://crm.example.com/contacts/{{ $json.contactKey }}',
		description:
			"A placeholder in double curly braces names a value of this step's saved response body; it is filled in when Compensate runs, not when this node runs",
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Compensation Body',
		name: 'compensationBody',
		type: 'string',
		typeOptions: { rows: 3 },
		default: '',
		placeholder: 'e.g. {"status": "cancelled", "contact": "{{ $json.contactKey }}"}',
		description:
			"JSON (or text) sent with the compensating request; placeholders name values of this step's saved response body",
		displayOptions: { show: { compensation: ['request'] } },
	},
	{
		displayName: 'Repair Plan',
		name: 'compensationPlan',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. Refund the payment in the Stripe dashboard',
		displayOptions: { show: { compensation: ['manual'] } },
	},
	{
		displayName: 'Response',
		name: 'responseFormat',
		type: 'options',
		options: [
			{ name: 'Body', value: 'body' },
			{ name: 'Full Response', value: 'full', description: 'Status code, headers and body' },
			{
				name: 'Input Item With Response',
				value: 'inputAndResponse',
				description: 'The input item, with the response body under "response"',
			},
		],
		default: 'body',
	},
];
