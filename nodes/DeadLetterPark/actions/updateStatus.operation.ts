import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { type DeadLetterStatus, type Store, updateDeadLetterStatus } from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { toNodeError } from '../../shared/store';

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
): Promise<INodeExecutionData[]> {
	const idOf = itemValueReader(this, items, 'targetId');
	const out: INodeExecutionData[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const expected = String(this.getNodeParameter('expectedGeneration', index, '') ?? '').trim();
			const change = await updateDeadLetterStatus(store, {
				id: String(idOf(index) ?? '').trim(),
				to: statusOf(index),
				actor: String(this.getNodeParameter('actor', index, '') ?? ''),
				reason: String(this.getNodeParameter('reason', index, '') ?? ''),
				expectedGeneration: expected || undefined,
			});
			out.push({
				json: { id: change.id, from: change.from, to: change.to, generation: change.generation },
				pairedItem: { item: index },
			});
		} catch (error) {
			if (!this.continueOnFail()) throw toNodeError(this, error, index);
			out.push({
				json: { error: error instanceof Error ? error.message : String(error) },
				pairedItem: { item: index },
			});
		}
	}
	return out;
}
