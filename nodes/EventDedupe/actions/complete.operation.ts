import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { completeEvents, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';
import { itemValueReader, requiredText } from '../../shared/itemValues';
import { consumerName } from './consumer';

/** Complete: marks the items' events done in one statement; items pass through unchanged. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const ids: string[] = [];
	const eventIdOf = itemValueReader(this, items, 'eventId');
	for (let index = 0; index < items.length; index++) {
		try {
			ids.push(
				requiredText(
					eventIdOf,
					'event ID',
					index,
					'Set Event ID to the same expression the Claim step uses.',
				),
			);
		} catch (error) {
			throw toNodeError(this, error, index);
		}
	}
	const completed = new Set(
		await completeEvents(store, consumerName(this), ids).catch((error: unknown) => {
			throw toNodeError(this, error);
		}),
	);
	return [
		items.map((item, index) => ({
			json: {
				...item.json,
				_dedupe: { eventId: ids[index], completed: completed.has(ids[index]) },
			},
			pairedItem: { item: index },
		})),
	];
}
