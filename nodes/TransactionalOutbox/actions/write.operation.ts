import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { type Store, writeWithMessages } from '../../../lib';
import { errorItem } from '../../shared/errorItem';
import { outboxStoreFor } from './outboxStore';
import { readWrites } from './writeItems';
import { eventIdRetention } from '../../shared/descriptions';

const methodOptions = [
	{ name: 'DELETE', value: 'DELETE' },
	{ name: 'PATCH', value: 'PATCH' },
	{ name: 'POST', value: 'POST' },
	{ name: 'PUT', value: 'PUT' },
];

const properties: INodeProperties[] = [
	{
		displayName: 'Statements',
		name: 'statements',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Statement',
		default: { statement: [{ query: '', queryParameters: '' }] },
		description:
			'Run in order, for each item, in the same transaction as its messages. Leave empty to only add messages.',
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
	},
	{
		displayName: 'Messages',
		name: 'messages',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Message',
		default: {},
		description: 'The messages each item announces; sent later by the Outbox relay',
		displayOptions: { show: { messagesInput: ['fields'] } },
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
		displayOptions: { show: { messagesInput: ['json'] } },
	},
	{
		displayName: 'Handle Each Event Once',
		name: 'handleOnce',
		type: 'boolean',
		default: false,
		description:
			"Whether to claim the item's event in the same transaction as its statements and messages: a redelivered event writes nothing, and a failing item leaves its event unclaimed for the next delivery",
	},
	{
		displayName: 'Event ID',
		name: 'eventId',
		type: 'string',
		required: true,
		default: '={{ $json.id }}',
		description:
			'The ID the sender gives the event; the same event delivered again carries the same ID',
		displayOptions: { show: { handleOnce: [true] } },
	},
	{
		displayName: 'Consumer',
		name: 'consumer',
		type: 'string',
		default: '',
		placeholder: 'this workflow',
		description:
			'Event IDs are unique per consumer, shared with Event Dedupe nodes of the same consumer. Empty means this workflow.',
		displayOptions: { show: { handleOnce: [true] } },
	},
	{ ...eventIdRetention, displayOptions: { show: { handleOnce: [true] } } },
];

export const description = updateDisplayOptions({ show: { operation: ['write'] } }, properties);

/**
 * Write: each item's statements and messages, in one transaction for the run (a savepoint per
 * item under continue-on-fail). Outputs each item with `_outbox`: its messages (id, whether
 * added) and what its statements returned.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const continueOnFail = this.continueOnFail();
	const { writes, outputs } = await readWrites(this, items);

	const outbox = await outboxStoreFor(this, store);
	const workflow = this.getWorkflow();
	const results = await writeWithMessages(
		outbox,
		writes,
		{ workflowId: workflow.id, executionId: this.getExecutionId(), node: this.getNode().name },
		{ continueOnFail },
	);
	for (const result of results) {
		if (!result.ok) {
			outputs[result.index] = errorItem(result.error, result.index);
			continue;
		}
		// A redelivered event wrote nothing: no rows, no messages.
		const outbox =
			'duplicate' in result
				? { duplicate: true, eventId: result.eventId, messages: [], statements: [] }
				: { messages: result.messages, statements: result.statements };
		outputs[result.index] = {
			json: { ...items[result.index].json, _outbox: outbox as unknown as IDataObject },
			pairedItem: { item: result.index },
		};
	}
	return [outputs.filter((item): item is INodeExecutionData => item !== undefined)];
}
