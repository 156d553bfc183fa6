import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { inRange, LIMITS, type Store, takeMessages } from '../../../lib';
import { range } from '../../shared/range';
import { outboxStoreFor } from './outboxStore';

const MAX_MESSAGES = { ...LIMITS.listLimit, label: 'Max Messages' };

const properties: INodeProperties[] = [
	{
		displayName: 'Max Messages',
		name: 'maxMessages',
		type: 'number',
		typeOptions: range(MAX_MESSAGES),
		default: 10,
		description: 'How many messages to take at most',
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		typeOptions: range(LIMITS.claimLeaseSeconds),
		default: 300,
		description:
			'How long this run owns the messages. Longer than sending them takes (the write step, retries included); after it, they are taken again with a new generation.',
	},
	{
		displayName: 'Destination',
		name: 'destination',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description: 'Only messages for this destination; empty takes all',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['take'] } }, properties);

/**
 * Take: claims up to Max Messages for this execution, under a lease, whatever the number of
 * input items (a trigger's one item, typically). Outputs one item per message, with what the
 * relay needs to send it (method, URL, headers, body, idempotency key) and to settle it (id,
 * generation).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outbox = await outboxStoreFor(this, store);
	const messages = await takeMessages(outbox, {
		limit: inRange(this.getNodeParameter('maxMessages', 0, 10), MAX_MESSAGES),
		leaseSeconds: inRange(this.getNodeParameter('leaseSeconds', 0, 300), LIMITS.claimLeaseSeconds),
		takenBy: this.getExecutionId() ?? 'manual',
		destination: String(this.getNodeParameter('destination', 0, '') ?? ''),
	});
	const paired = items.length > 0 ? { item: 0 } : undefined;
	return [
		messages.map((message) => ({
			json: {
				...message,
				orderingKey: message.orderingKey ?? null,
				leaseUntil: message.leaseUntil?.toISOString() ?? null,
				createdAt: message.createdAt.toISOString(),
			} as unknown as IDataObject,
			...(paired ? { pairedItem: paired } : {}),
		})),
	];
}
