import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	listPauses,
	pause as pauseScope,
	type PauseScope,
	resume as resumeScope,
	type Store,
} from '../../../lib';
import { toNodeError } from '../../shared/store';

const text = (context: IExecuteFunctions, name: string, index: number): string =>
	String(context.getNodeParameter(name, index, '') ?? '').trim();

async function change(
	context: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
	paused: boolean,
): Promise<INodeExecutionData[][]> {
	const out: INodeExecutionData[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const args = [
				store,
				text(context, 'scope', index) as PauseScope,
				text(context, 'pauseName', index),
				text(context, 'actor', index),
				text(context, 'reason', index),
			] as const;
			const state = paused ? await pauseScope(...args) : await resumeScope(...args);
			out.push({ json: state as unknown as IDataObject, pairedItem: { item: index } });
		} catch (error) {
			if (!context.continueOnFail()) throw toNodeError(context, error, index);
			out.push({
				json: { error: error instanceof Error ? error.message : String(error) },
				pairedItem: { item: index },
			});
		}
	}
	return [out];
}

/** Pause: one change per item, each with who and why. */
export async function pause(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return await change(this, store, items, true);
}

/** Resume: one change per item; an integration's held items move to replay requested. */
export async function resume(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return await change(this, store, items, false);
}

/** Check: one query for the run; each item goes to Running or Paused by its own scope and name. */
export async function check(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const paused = await listPauses(store, { paused: true }).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	const running: INodeExecutionData[] = [];
	const held: INodeExecutionData[] = [];
	items.forEach((item, index) => {
		const scope = text(this, 'scope', index);
		const name = text(this, 'pauseName', index);
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

/** List: every pause record and its state. */
export async function list(this: IExecuteFunctions, store: Store): Promise<INodeExecutionData[][]> {
	const all = await listPauses(store).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	return [all.map((state) => ({ json: state as unknown as IDataObject, pairedItem: { item: 0 } }))];
}
