import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { checkedEventId, completeEvents, ItemError, type Store } from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { consumerName } from '../../shared/consumer';

const properties: INodeProperties[] = [
	{
		displayName: 'Claimed By Execution',
		name: 'claimedBy',
		type: 'string',
		default: '',
		placeholder: 'this execution',
		description:
			'The execution that claimed the events. Only its claims are completed: after another execution took a claim over, the old one completes nothing. Empty means this execution.',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['complete'] } }, properties);

/**
 * Complete: marks the items' events done for good in one statement, if the claiming execution
 * (this one, unless set) still holds them; items pass through with what happened to each.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const ids: string[] = [];
	const eventIdOf = itemValueReader(this, items, 'eventId');
	for (let index = 0; index < items.length; index++) {
		const checked = checkedEventId(eventIdOf(index));
		if ('problem' in checked)
			throw new ItemError(
				`Item ${index} ${checked.problem}`,
				index,
				'Set Event ID to the same expression the Claim step uses.',
			);
		ids.push(checked.id);
	}
	const owner =
		String(this.getNodeParameter('claimedBy', 0, '') ?? '').trim() || this.getExecutionId();
	const results = await completeEvents(store, consumerName(this), ids, owner);
	return [
		items.map((item, index) => {
			const result = results[index];
			return {
				json: {
					...item.json,
					_dedupe: {
						eventId: ids[index],
						completed: result.changed,
						// Not completed: someone else holds the claim now, or it is already complete.
						...(result.changed
							? {}
							: { claimedBy: result.owner ?? null, status: result.status ?? 'not claimed' }),
					},
				},
				pairedItem: { item: index },
			};
		}),
	];
}
