import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	inRange,
	ItemError,
	jsonValue,
	LIMITS,
	type OutboxWriteItem,
	parseOutboxMessage,
} from '../../../lib';
import { consumerName } from '../../shared/consumer';
import { forEachItem } from '../../shared/router';
import { statementOf } from './queryParameters';

/** The item's messages, from the fields or from one JSON expression. */
function messagesOf(context: IExecuteFunctions, itemIndex: number): Array<Record<string, unknown>> {
	if (context.getNodeParameter('messagesInput', itemIndex, 'fields') === 'json') {
		const value = jsonValue(
			context.getNodeParameter('messagesJson', itemIndex, '[]'),
			'list',
			itemIndex,
		);
		const list = value === null ? [] : Array.isArray(value) ? value : [value];
		list.forEach((entry, position) => {
			if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
				throw new ItemError(
					`Item ${itemIndex}, message ${position + 1} is not an object`,
					itemIndex,
					'Messages (JSON) must return an object or an array of objects with destination, method, url and idempotencyKey.',
				);
		});
		return list as Array<Record<string, unknown>>;
	}
	const fields = context.getNodeParameter('messages', itemIndex, {}) as IDataObject;
	return (fields.message as Array<Record<string, unknown>> | undefined) ?? [];
}

/**
 * Reads what Write does for one item: its event (with Handle Each Event Once), its non-empty
 * statements and its messages. A bad parameter throws, naming the item.
 */
function writeItemReader(context: IExecuteFunctions): (itemIndex: number) => OutboxWriteItem {
	const statementCount = (
		((context.getNode().parameters.statements as IDataObject | undefined)?.statement as
			unknown[] | undefined) ?? []
	).length;
	const handleOnce = context.getNodeParameter('handleOnce', 0, false) === true;
	const eventOf = (index: number): OutboxWriteItem['event'] =>
		handleOnce
			? {
					consumer: consumerName(context, index),
					eventId: String(context.getNodeParameter('eventId', index, '') ?? ''),
					retentionDays: inRange(
						context.getNodeParameter('retentionDays', index, 30),
						LIMITS.retentionDays,
					),
				}
			: undefined;
	return (index) => ({
		index,
		event: eventOf(index),
		statements: Array.from({ length: statementCount }, (_, position) =>
			statementOf(context, index, position),
		).filter((statement) => statement.text.trim() !== ''),
		messages: messagesOf(context, index).map((raw, position) =>
			parseOutboxMessage(raw, index, position),
		),
	});
}

/** Every item's write, and the outputs so far (by item index): the error items of Continue On Fail. */
export interface ReadWrites {
	writes: OutboxWriteItem[];
	outputs: Array<INodeExecutionData | undefined>;
}

/**
 * Reads every item's SQL and messages before any SQL runs: a bad parameter fails the run, or
 * with Continue On Fail ends that item alone, as its error output.
 */
export async function readWrites(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<ReadWrites> {
	const writeOf = writeItemReader(context);
	const read: ReadWrites = { writes: [], outputs: new Array(items.length) };
	await forEachItem(
		context,
		items,
		(index) => {
			read.writes.push(writeOf(index));
		},
		(failed, index) => {
			read.outputs[index] = failed;
		},
	);
	return read;
}
