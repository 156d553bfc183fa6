import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	ItemError,
	MessageSettleOutcome,
	type MessageSettleRequest,
	type MessageSettleResult,
} from '../../../lib';
import { forEachItem } from '../../shared/router';

/** Reads Message ID and Generation of an item; either missing is an error naming the item. */
export function settleRequestOf(
	context: IExecuteFunctions,
	itemIndex: number,
): MessageSettleRequest {
	const id = String(context.getNodeParameter('messageId', itemIndex, '') ?? '').trim();
	const generationText = String(context.getNodeParameter('generation', itemIndex, '') ?? '').trim();
	const generation = Number(generationText);
	if (!/^\d+$/.test(id))
		throw new ItemError(
			`Item ${itemIndex} has no message ID (got ${JSON.stringify(id)})`,
			itemIndex,
			"Map Message ID to the id that Take output with the message, e.g. {{ $('Take Messages').item.json.id }}.",
		);
	if (!generationText || !Number.isInteger(generation) || generation < 1)
		throw new ItemError(
			`Item ${itemIndex} has no generation (got ${JSON.stringify(generationText)})`,
			itemIndex,
			'Map Generation to the generation that Take output with the message: it proves this run still owns it.',
		);
	return { index: itemIndex, id, generation };
}

/**
 * Reads every item's request (an unreadable item is an error item under continue-on-fail, else
 * fails the run), settles the readable ones in one call, and outputs each input item with
 * `_outbox`: the outcome (completed, retry_scheduled, dead, superseded, already_settled,
 * not_found) and the message's state. A superseded settle is also shown as a hint of the run.
 */
export async function settleItems<R extends MessageSettleRequest>(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	requestOf: (itemIndex: number) => R,
	settle: (requests: R[]) => Promise<MessageSettleResult[]>,
): Promise<INodeExecutionData[][]> {
	const out: Array<INodeExecutionData | undefined> = new Array(items.length);
	const requests: R[] = [];
	await forEachItem(
		context,
		items,
		(index) => {
			requests.push(requestOf(index));
		},
		(failed, index) => {
			out[index] = failed;
		},
	);
	const results = await settle(requests);
	for (const result of results) {
		out[result.index] = {
			json: {
				...items[result.index].json,
				_outbox: {
					id: result.id,
					generation: result.generation,
					outcome: result.outcome,
					status: result.status ?? null,
					attempt: result.attempt ?? null,
					currentGeneration: result.currentGeneration ?? null,
					takenBy: result.takenBy ?? null,
					availableAt: result.availableAt?.toISOString() ?? null,
					deadLetterId: result.deadLetterId ?? null,
					deadLetterClass: result.deadLetterClass ?? null,
				} as IDataObject,
			},
			pairedItem: { item: result.index },
		};
	}
	const superseded = results.filter((r) => r.outcome === MessageSettleOutcome.superseded);
	if (superseded.length > 0)
		context.addExecutionHints({
			message: `${superseded.length} message${superseded.length === 1 ? ' was' : 's were'} taken over by a later run (lease expired) and not settled here: ${superseded
				.slice(0, 5)
				.map((r) => `${r.id} (now generation ${r.currentGeneration})`)
				.join(', ')}. Raise the Take lease above the time a relay run takes.`,
			type: 'warning',
			location: 'outputPane',
		});
	return [out.filter((item): item is INodeExecutionData => item !== undefined)];
}
