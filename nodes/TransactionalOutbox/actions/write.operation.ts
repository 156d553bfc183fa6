import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { type Store, writeWithMessages } from '../../../lib';
import { errorItem } from '../../shared/errorItem';
import { outboxStoreFor } from './outboxStore';
import { readWrites } from './writeItems';

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
