import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';

/** Retries of transient failures, and the precondition of a conditional write. */
export const retriesProperties: INodeProperties[] = [
	// Retries
	{
		displayName: 'Retries',
		name: 'retries',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Base Delay (Seconds)',
				name: 'baseDelaySeconds',
				type: 'number',
				typeOptions: range(LIMITS.baseDelaySeconds),
				default: 2,
			},
			{
				displayName: 'Circuit Breaker Cool-Down (Seconds)',
				name: 'breakerCoolDownSeconds',
				type: 'number',
				typeOptions: range(LIMITS.breakerCoolDownSeconds),
				default: 60,
			},
			{
				displayName: 'Circuit Breaker Threshold',
				name: 'breakerThreshold',
				type: 'number',
				typeOptions: range(LIMITS.breakerThreshold),
				default: 0,
				description:
					'Consecutive transient failures of the integration that open its breaker; while open, items are held. 0 turns it off.',
			},
			{
				displayName: 'Concurrency',
				name: 'concurrency',
				type: 'number',
				typeOptions: range(LIMITS.concurrency),
				default: 5,
				description: 'Items of a run written at once',
			},
			{
				displayName: 'Conflict On',
				name: 'conflictOn',
				type: 'string',
				default: '412',
				description:
					'Statuses that mean the target refused the precondition (its record changed since): parked as a conflict for a person, never retried. Add 409 for targets that answer a stale write with it.',
			},
			{
				displayName: 'Deadline (Seconds)',
				name: 'deadlineSeconds',
				type: 'number',
				typeOptions: range(LIMITS.deadlineSeconds),
				default: 120,
				description: 'Budget for each item, retries included; then it is parked',
			},
			{
				displayName: 'Honour Retry-After',
				name: 'honourRetryAfter',
				type: 'boolean',
				default: true,
			},
			{
				displayName: 'Max Attempts',
				name: 'maxAttempts',
				type: 'number',
				typeOptions: range(LIMITS.maxAttempts),
				default: 5,
			},
			{
				displayName: 'Max Delay (Seconds)',
				name: 'maxDelaySeconds',
				type: 'number',
				typeOptions: range(LIMITS.maxDelaySeconds),
				default: 60,
			},
			{
				displayName: 'Never Retry On',
				name: 'neverRetry',
				type: 'string',
				default: '400,401,403,404,409,422',
				description: 'Statuses that are permanent failures',
			},
			{
				displayName: 'Retry On',
				name: 'retryOn',
				type: 'string',
				default: '408,425,429,500,502,503,504',
				description: 'Statuses that are transient failures',
			},
		],
	},

	{
		displayName: 'Precondition',
		name: 'precondition',
		type: 'options',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'If-Match',
				value: 'ifMatch',
				description:
					'Send the ETag (or version) the write was built on; the target refuses it with 412 if the record changed',
			},
			{
				name: 'If-Unmodified-Since',
				value: 'ifUnmodifiedSince',
				description: 'Send the last-modified time the write was built on',
			},
			{
				name: 'Custom Header',
				value: 'header',
				description: 'A header of your own carrying the expected version',
			},
		],
		default: 'none',
		description:
			'A conditional write: the target changes the record only if it still holds the version this write expects, so an old retry never overwrites a newer decision',
	},
	{
		displayName: 'Expected Version',
		name: 'preconditionValue',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.etag }}',
		description: 'The ETag, version or last-modified time the write was built on',
		displayOptions: { hide: { precondition: ['none'] } },
	},
	{
		displayName: 'Version Header',
		name: 'preconditionHeader',
		type: 'string',
		default: '',
		placeholder: 'e.g. X-Expected-Version',
		displayOptions: { show: { precondition: ['header'] } },
	},
];
