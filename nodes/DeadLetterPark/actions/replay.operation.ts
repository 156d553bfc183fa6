import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import {
	compensatedReplayMessage,
	compensatedSteps,
	getDeadLetters,
	StatusChangeRefusedError,
	type Store,
} from '../../../lib';
import { changeStatuses } from './updateStatus.operation';

/** Replay reads Dead Letter ID, Actor and Reason, which Update Status declares for both. */
export const description: INodeProperties[] = [];

/**
 * Replay: marks each record replay requested (with who and why in the audit trail) and outputs
 * its original payload, with the idempotency key and step under `_deadLetter`, so the next node
 * re-runs the failed step with the same key.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	// A record whose steps Compensate reversed is never replayed: its failed step would run on
	// top of reversed ones.
	const refuseCompensated = async (id: string) => {
		const steps = (await compensatedSteps(store, [id])).get(id);
		if (steps)
			throw new StatusChangeRefusedError(
				compensatedReplayMessage(id, steps),
				'Finish what Compensate started (Compensate again), or resolve or abandon the item with a reason saying what is left to do.',
			);
	};
	const changed = await changeStatuses.call(
		this,
		store,
		items,
		() => 'replay_requested',
		refuseCompensated,
	);
	const ids = changed.filter((item) => !item.json.error).map((item) => String(item.json.id));
	const records = await getDeadLetters(store, ids);
	return [
		changed.map((item) => {
			if (item.json.error) return item;
			const record = records.find((r) => r.id === String(item.json.id))!;
			return {
				json: {
					...(record.payload as IDataObject),
					_deadLetter: {
						id: record.id,
						idempotencyKey: record.idempotency_key,
						step: record.step,
						workflowId: record.workflow_id,
						status: record.status,
					},
				},
				pairedItem: item.pairedItem,
			};
		}),
	];
}
