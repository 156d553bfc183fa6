import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { listPauses, type Store } from '../../../../lib';
import { textParameter } from './pauseChanges';

/** Check reads Scope and Name, which the Pause resource declares for check, pause and resume. */
export const description: INodeProperties[] = [];

/** Check: one query for the run; each item goes to Running or Paused by its own scope and name. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const paused = await listPauses(store, { paused: true });
	const running: INodeExecutionData[] = [];
	const held: INodeExecutionData[] = [];
	items.forEach((item, index) => {
		const scope = textParameter(this, 'scope', index);
		const name = textParameter(this, 'pauseName', index);
		const state = paused.find((p) => p.scope === scope && p.name === name);
		if (state)
			held.push({
				json: {
					...item.json,
					_pause: {
						scope,
						name,
						changedBy: state.changedBy,
						reason: state.reason,
						since: state.changedAt,
					},
				},
				binary: item.binary,
				pairedItem: { item: index },
			});
		else running.push({ json: item.json, binary: item.binary, pairedItem: { item: index } });
	});
	return [running, held];
}
