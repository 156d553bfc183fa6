import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../lib';
import { range } from '../shared/range';

/**
 * Write runs the item's SQL and adds its outbox messages in one transaction; a relay takes the
 * messages (Take), sends them with Idempotent HTTP Write and settles them (Complete, Fail).
 */
const show = (...operations: string[]) => ({ show: { operation: operations } });

const methodOptions = [
	{ name: 'DELETE', value: 'DELETE' },
	{ name: 'PATCH', value: 'PATCH' },
	{ name: 'POST', value: 'POST' },
	{ name: 'PUT', value: 'PUT' },
];

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Complete',
				value: 'complete',
				action: 'Complete sent messages',
				description: 'Mark messages sent, if the taker still owns them',
			},
			{
				name: 'Fail',
				value: 'fail',
				action: 'Fail messages',
				description:
					'Schedule a retry after a transient failure, hold it while its destination is paused; park it as a dead letter past the attempt cap or on a permanent failure',
			},
			{
				name: 'Purge',
				value: 'purge',
				action: 'Purge settled messages',
				description: 'Delete messages done or dead for longer than the retention',
			},
			{
				name: 'Take',
				value: 'take',
				action: 'Take pending messages',
				description: 'Claim messages to send under a lease, in order per ordering key',
			},
			{
				name: 'Write',
				value: 'write',
				action: 'Write rows and messages in one transaction',
				description:
					'Run SQL statements and add outbox messages in one transaction: both commit, or neither',
			},
		],
		default: 'write',
	},
	{
		displayName: 'Outbox Database',
		name: 'outboxDatabase',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Reliability Store',
				value: 'store',
				description: "The store's database; the business tables must live there too",
			},
			{
				name: 'Postgres Credential',
				value: 'postgres',
				description:
					'The database of your business tables; the outbox table is created there in its own schema',
			},
		],
		default: 'store',
		description:
			'Where the outbox table lives. It must be the database of the business tables, so both change in one transaction. Every operation of one outbox uses the same choice.',
	},
	{
		displayName: 'Outbox Schema',
		name: 'outboxSchema',
		type: 'string',
		default: 'n8n_reliability',
		description:
			'Schema for the outbox table in that database; created and migrated on first use. Lowercase letters, digits and underscores.',
		displayOptions: { show: { outboxDatabase: ['postgres'] } },
	},

	// Write
	{
		displayName: 'Statements',
		name: 'statements',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Statement',
		default: { statement: [{ query: '', queryParameters: '' }] },
		description:
			'Run in order, for each item, in the same transaction as its messages. Leave empty to only add messages.',
		displayOptions: show('write'),
		options: [
			{
				displayName: 'Statement',
				name: 'statement',
				values: [
					{
						displayName: 'Query',
						name: 'query',
						type: 'string',
						default: '',
						placeholder: 'e.g. INSERT INTO orders (order_no, amount) VALUES ($1, $2)',
						noDataExpression: true,
						typeOptions: { editor: 'sqlEditor', sqlDialect: 'PostgreSQL', rows: 4 },
						description:
							"The SQL to run. Use $1, $2, ... for the 'Query Parameters' below; n8n expressions in {{ }} are replaced by their text, as in the Postgres node.",
						hint: 'Use query parameters for values, so they are bound rather than spliced into the SQL',
					},
					{
						displayName: 'Query Parameters',
						name: 'queryParameters',
						type: 'string',
						default: '',
						placeholder: 'e.g. {{ $json.orderNo }}, {{ $json.amount }}',
						description:
							'Comma-separated values for $1, $2, ... (each may be an expression), or one expression that returns an array. Like the Postgres node.',
					},
				],
			},
		],
	},
	{
		displayName: 'Define Messages',
		name: 'messagesInput',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Using Fields Below', value: 'fields' },
			{
				name: 'Using JSON',
				value: 'json',
				description: 'An expression that returns one message object or an array of them',
			},
		],
		default: 'fields',
		displayOptions: show('write'),
	},
	{
		displayName: 'Messages',
		name: 'messages',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Message',
		default: {},
		description: 'The messages each item announces; sent later by the Outbox relay',
		displayOptions: { show: { operation: ['write'], messagesInput: ['fields'] } },
		options: [
			{
				displayName: 'Message',
				name: 'message',
				values: [
					{
						displayName: 'Body',
						name: 'body',
						type: 'json',
						default: '={{ $json }}',
					},
					{
						displayName: 'Destination',
						name: 'destination',
						type: 'string',
						default: '',
						placeholder: 'e.g. crm',
						description:
							'The system the message goes to. Keys are unique per destination; a relay can take one destination only.',
					},
					{
						displayName: 'Headers',
						name: 'headers',
						type: 'json',
						default: '{}',
						description: 'Extra request headers as a JSON object of names and values',
					},
					{
						displayName: 'Idempotency Key',
						name: 'idempotencyKey',
						type: 'string',
						default: '',
						placeholder: "e.g. {{ 'order:' + $json.orderNo + ':created' }}",
						description:
							'Sent with the message on every attempt. Derive it from the business operation, never from a time, the execution or a random value.',
					},
					{
						displayName: 'Method',
						name: 'method',
						type: 'options',
						options: methodOptions,
						default: 'POST',
					},
					{
						displayName: 'Ordering Key',
						name: 'orderingKey',
						type: 'string',
						default: '',
						placeholder: 'e.g. {{ $json.customerId }}',
						description:
							'Optional. Messages of one destination and ordering key are sent one at a time, in the order they were written.',
					},
					{
						displayName: 'URL',
						name: 'url',
						type: 'string',
						default: '',
						placeholder: 'e.g. https://api.example.com/orders',
					},
				],
			},
		],
	},
	{
		displayName: 'Messages (JSON)',
		name: 'messagesJson',
		type: 'json',
		default: '={{ $json.messages }}',
		description:
			'One message or an array of them, each an object with the fields destination, method, URL, idempotencyKey, and optionally orderingKey, body and headers',
		displayOptions: { show: { operation: ['write'], messagesInput: ['json'] } },
	},
	{
		displayName: 'Handle Each Event Once',
		name: 'handleOnce',
		type: 'boolean',
		default: false,
		description:
			"Whether to claim the item's event in the same transaction as its statements and messages: a redelivered event writes nothing, and a failing item leaves its event unclaimed for the next delivery",
		displayOptions: show('write'),
	},
	{
		displayName: 'Event ID',
		name: 'eventId',
		type: 'string',
		required: true,
		default: '={{ $json.id }}',
		description:
			'The ID the sender gives the event; the same event delivered again carries the same ID',
		displayOptions: { show: { operation: ['write'], handleOnce: [true] } },
	},
	{
		displayName: 'Consumer',
		name: 'consumer',
		type: 'string',
		default: '',
		placeholder: 'this workflow',
		description:
			'Event IDs are unique per consumer, shared with Event Dedupe nodes of the same consumer. Empty means this workflow.',
		displayOptions: { show: { operation: ['write'], handleOnce: [true] } },
	},
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: range(LIMITS.retentionDays),
		default: 30,
		description: 'How long an event ID is remembered; keep it longer than any sender retries',
		displayOptions: { show: { operation: ['write'], handleOnce: [true] } },
	},

	// Take
	{
		displayName: 'Max Messages',
		name: 'maxMessages',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 10,
		description: 'How many messages to take at most',
		displayOptions: show('take'),
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 300,
		description:
			'How long this run owns the messages. Longer than sending them takes (the write step, retries included); after it, they are taken again with a new generation.',
		displayOptions: show('take'),
	},
	{
		displayName: 'Destination',
		name: 'destination',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description: 'Only messages for this destination; empty takes all',
		displayOptions: show('take'),
	},

	// Complete, Fail
	{
		displayName: 'Message ID',
		name: 'messageId',
		type: 'string',
		default: '={{ $json.id }}',
		description: 'The ID of the message, as Take output it',
		displayOptions: show('complete', 'fail'),
	},
	{
		displayName: 'Generation',
		name: 'generation',
		type: 'string',
		default: '={{ $json.generation }}',
		description:
			'The generation Take output with the message. A settle for an older generation is refused and reported as superseded.',
		displayOptions: show('complete', 'fail'),
	},
	{
		displayName: 'Error Class',
		name: 'errorClass',
		type: 'string',
		default: '={{ $json.class }}',
		description:
			"The failure's class (Idempotent HTTP Write's Failed output carries it as class). Transient classes are retried; any other is permanent.",
		displayOptions: show('fail'),
	},
	{
		displayName: 'Error Message',
		name: 'errorMessage',
		type: 'string',
		default: '={{ $json.message }}',
		displayOptions: show('fail'),
	},
	{
		displayName: 'HTTP Status',
		name: 'errorStatus',
		type: 'string',
		default: '={{ $json.status }}',
		displayOptions: show('fail'),
	},
	{
		displayName: 'Retry At',
		name: 'retryAt',
		type: 'string',
		default: '={{ $json.retryAt }}',
		description: "Not before this time (the target's Retry-After); empty for the backoff alone",
		displayOptions: show('fail'),
	},
	{
		displayName: 'Fail Options',
		name: 'failOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: show('fail'),
		options: [
			{
				displayName: 'Base Delay (Seconds)',
				name: 'baseDelaySeconds',
				type: 'number',
				default: 5,
				description: 'Full-jitter backoff: a random delay up to base × 2^(attempt-1)',
			},
			{
				displayName: 'Business Impact',
				name: 'impact',
				type: 'string',
				default: '',
				placeholder: 'e.g. order not in ERP',
				description:
					'Shown with the dead letter; default: "message to crm not delivered" for destination crm',
			},
			{
				displayName: 'Mask Fields',
				name: 'maskFields',
				type: 'string',
				default: '',
				placeholder: 'e.g. apiKey, ssn',
				description:
					'Comma-separated field names to mask in the dead letter, besides the usual secret names',
			},
			{
				displayName: 'Max Attempts',
				name: 'maxAttempts',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 5,
				description: 'Takes a message gets in all; then it is parked as exhausted',
			},
			{
				displayName: 'Max Delay (Seconds)',
				name: 'maxDelaySeconds',
				type: 'number',
				default: 300,
			},
			{
				displayName: 'Owner',
				name: 'owner',
				type: 'string',
				default: '',
				placeholder: 'e.g. sales-ops',
				description: 'Who fixes messages parked here',
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
				displayName: 'Transient Classes',
				name: 'transientClasses',
				type: 'string',
				default: 'transient, exhausted, rate_limited, unknown_outcome, superseded',
				description:
					'Comma-separated error classes to retry. An unknown outcome is safe to retry because the relay sends the same key. A paused destination (class paused) always waits, without using up attempts.',
			},
		],
	},

	// Purge
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 30,
		description:
			'Delete messages done or dead for longer than this. Keep it longer than anyone may write the same key again: a purged key is a new message.',
		displayOptions: show('purge'),
	},
];
