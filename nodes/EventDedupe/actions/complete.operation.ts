import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { checkedEventId, completeEvents, ItemError, type Store } from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { consumerName } from '../../shared/consumer';
import { checkEachItem, outputOfEachChecked } from '../../shared/router';

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
 * (this one, unless set) still holds them; items pass through with what happened to each. An
 * item without a usable event ID fails the run before anything is completed, or with Continue
 * On Fail is its error item while the others are completed.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const eventIdOf = itemValueReader(this, items, 'eventId');
	const checked = await checkEachItem(this, items, (index) => {
		const eventId = checkedEventId(eventIdOf(index));
		if ('problem' in eventId)
			throw new ItemError(
				`Item ${index} ${eventId.problem}`,
				index,
				'Set Event ID to the same expression the Claim step uses.',
			);
		return eventId.id;
	});
	const owner =
		String(this.getNodeParameter('claimedBy', 0, '') ?? '').trim() || this.getExecutionId();
	const ids = [...checked.passed.values()];
	const results =
		ids.length === 0 ? [] : await completeEvents(store, consumerName(this), ids, owner);
	const resultOf = new Map([...checked.passed.keys()].map((index, at) => [index, results[at]]));
	return [
		await outputOfEachChecked(this, items, checked, (eventId, index) => {
			const result = resultOf.get(index)!;
			return {
				json: {
					...items[index].json,
					_dedupe: {
						eventId,
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
