import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';
import { maskFieldsOption, retentionDays } from '../../shared/descriptions';

/** The idempotency key: the integration it belongs to and how the key is built. */
export const keyProperties: INodeProperties[] = [
	// Idempotency
	{
		displayName: 'Integration',
		name: 'integration',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description:
			'The system this writes to. Keys are unique per integration by default; pausing it (Reliability Control) holds the writes.',
	},
	{
		displayName: 'Key Mode',
		name: 'keyMode',
		type: 'options',
		options: [
			{
				name: 'Business Identity',
				value: 'business',
				description: 'A hash of source, record, action and version',
			},
			{
				name: 'Custom',
				value: 'custom',
				description: 'Any expression that is the same on every retry and replay',
			},
		],
		default: 'business',
	},
	{
		displayName: 'Source System',
		name: 'keySource',
		type: 'string',
		default: '',
		placeholder: 'e.g. webform',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Record ID',
		name: 'keyRecordId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Action',
		name: 'keyAction',
		type: 'string',
		default: '',
		placeholder: 'e.g. create-contact',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Record Version',
		name: 'keyVersion',
		type: 'string',
		default: '1',
		description: 'The version or updated-at of the record, so a later change is a new operation',
		displayOptions: { show: { keyMode: ['business'] } },
	},
	{
		displayName: 'Key',
		name: 'customKey',
		type: 'string',
		default: '',
		placeholder: "e.g. {{ 'invoice:' + $json.number + ':post' }}",
		description:
			'Never the execution ID, the item index, a time or a random value: a retry must produce the same key',
		displayOptions: { show: { keyMode: ['custom'] } },
	},
	{
		displayName: 'Idempotency Options',
		name: 'idempotency',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Header Name',
				name: 'headerName',
				type: 'string',
				default: 'Idempotency-Key',
			},
			{
				displayName: 'Header Value',
				name: 'quoting',
				type: 'options',
				options: [
					{ name: 'Plain (Stripe)', value: 'plain' },
					{ name: 'Quoted String (IETF Draft)', value: 'quoted' },
				],
				default: 'plain',
			},
			{
				displayName: 'Item Reference',
				name: 'itemReference',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.orderId }}',
				description:
					"What the writes of one business item share, so a later step that parks the item lists this step (and its compensation) in the dead letter. Empty: this execution's item index.",
			},
			maskFieldsOption(
				'e.g. iban, birthDate',
				'Field names masked in everything the write keeps or passes on (saved responses, errors, parked items), besides the usual secret names',
			),
			retentionDays(
				90,
				'How long a settled key is remembered (at least a day): longer than any sender retries or replays, and at least as long as the dead letters replayed through this write are kept (90 days unless their park says otherwise). A key in progress or with an unknown outcome is never forgotten.',
			),
			{
				displayName: 'Saved Body Limit (KB)',
				name: 'maxSavedBodyKb',
				type: 'number',
				typeOptions: range(LIMITS.maxSavedBodyKb),
				default: 64,
				description: 'Largest response body saved for replays',
			},
			{
				displayName: 'Scope',
				name: 'scope',
				type: 'string',
				default: '',
				description:
					'Keys are unique per scope; empty means the integration (or this workflow and node when there is none)',
			},
			{
				displayName: 'Send Key to Target',
				name: 'sendKey',
				type: 'boolean',
				default: true,
				description:
					'Whether to send the key as a header; turn off for targets that reject unknown headers',
			},
		],
	},
];
