import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	inRange,
	ItemError,
	jsonValue,
	LIMITS,
	type OutboxWriteItem,
	parseOutboxMessage,
	type Store,
	writeWithMessages,
} from '../../../lib';
import { consumerName } from '../../shared/consumer';
import { errorItem } from '../../shared/errorItem';
import { forEachItem } from '../../shared/router';
import { outboxStoreFor } from './outboxStore';
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
	const statementCount = (
		((this.getNode().parameters.statements as IDataObject | undefined)?.statement as
			unknown[] | undefined) ?? []
	).length;

	const handleOnce = this.getNodeParameter('handleOnce', 0, false) === true;
	const eventOf = (index: number): OutboxWriteItem['event'] =>
		handleOnce
			? {
					consumer: consumerName(this, index),
					eventId: String(this.getNodeParameter('eventId', index, '') ?? ''),
					retentionDays: inRange(
						this.getNodeParameter('retentionDays', index, 30),
						LIMITS.retentionDays,
					),
				}
			: undefined;

	// Every item's SQL and messages first: a bad parameter ends that item before any SQL runs.
	const out: Array<INodeExecutionData | undefined> = new Array(items.length);
	const prepared: OutboxWriteItem[] = [];
	await forEachItem(
		this,
		items,
		(index) => {
			prepared.push({
				index,
				event: eventOf(index),
				statements: Array.from({ length: statementCount }, (_, position) =>
					statementOf(this, index, position),
				).filter((statement) => statement.text.trim() !== ''),
				messages: messagesOf(this, index).map((raw, position) =>
					parseOutboxMessage(raw, index, position),
				),
			});
		},
		(failed, index) => {
			out[index] = failed;
		},
	);

	const outbox = await outboxStoreFor(this, store);
	const workflow = this.getWorkflow();
	const results = await writeWithMessages(
		outbox,
		prepared,
		{ workflowId: workflow.id, executionId: this.getExecutionId(), node: this.getNode().name },
		{ continueOnFail },
	);
	for (const result of results) {
		if (!result.ok) {
			out[result.index] = errorItem(result.error, result.index);
			continue;
		}
		// A redelivered event wrote nothing: no rows, no messages.
		const outbox =
			'duplicate' in result
				? { duplicate: true, eventId: result.eventId, messages: [], statements: [] }
				: { messages: result.messages, statements: result.statements };
		out[result.index] = {
			json: { ...items[result.index].json, _outbox: outbox as unknown as IDataObject },
			pairedItem: { item: result.index },
		};
	}
	return [out.filter((item): item is INodeExecutionData => item !== undefined)];
}
