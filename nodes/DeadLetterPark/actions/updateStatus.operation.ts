import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { type DeadLetterStatus, type Store, updateDeadLetterStatus } from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { outputOfEachItem } from '../../shared/router';
import { statusOptions } from './statusOptions';

/**
 * Which record, who and why: Replay and Compensate change a record the way Update Status does, so
 * they show these three too. New Status and Expected Generation are Update Status's alone.
 */
const recordChange = () => ({ show: { operation: ['updateStatus', 'replay', 'compensate'] } });
const statusChange = () => ({ show: { operation: ['updateStatus'] } });

export const description: INodeProperties[] = [
	{
		displayName: 'Dead Letter ID',
		name: 'targetId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: recordChange(),
	},
	{
		displayName: 'New Status',
		name: 'newStatus',
		type: 'options',
		options: statusOptions,
		default: 'being_fixed',
		displayOptions: statusChange(),
	},
	{
		displayName: 'Actor',
		name: 'actor',
		type: 'string',
		default: '',
		placeholder: 'e.g. maria@example.com',
		description: 'Who makes the change; recorded in the audit trail. Required.',
		displayOptions: recordChange(),
	},
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		description: 'Why; required to resolve or abandon',
		displayOptions: recordChange(),
	},
	{
		displayName: 'Expected Generation',
		name: 'expectedGeneration',
		type: 'string',
		default: '',
		placeholder: "e.g. {{ $('Take for Replay').item.json.generation }}",
		description:
			'Only change the record while it is still at this generation (the one Take for Replay output): a run that took it and was overtaken changes nothing. Empty: any generation.',
		displayOptions: statusChange(),
	},
];

/** Update Status: one change per item, each with its audit event; a refused change names the item. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return [
		await changeStatuses.call(
			this,
			store,
			items,
			(index) => this.getNodeParameter('newStatus', index) as DeadLetterStatus,
		),
	];
}

export async function changeStatuses(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
	statusOf: (index: number) => DeadLetterStatus,
	/** Refuses a record before its change (throws a StatusChangeRefusedError that says why). */
	refuse?: (id: string) => Promise<void>,
): Promise<INodeExecutionData[]> {
	const idOf = itemValueReader(this, items, 'targetId');
	return await outputOfEachItem(this, items, async (index) => {
		const expected = String(this.getNodeParameter('expectedGeneration', index, '') ?? '').trim();
		const id = String(idOf(index) ?? '').trim();
		await refuse?.(id);
		const change = await updateDeadLetterStatus(store, {
			id,
			to: statusOf(index),
			actor: String(this.getNodeParameter('actor', index, '') ?? ''),
			reason: String(this.getNodeParameter('reason', index, '') ?? ''),
			expectedGeneration: expected || undefined,
		});
		return {
			json: { id: change.id, from: change.from, to: change.to, generation: change.generation },
			pairedItem: { item: index },
		};
	});
}
