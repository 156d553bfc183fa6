import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { listPauses, type Store } from '../../../../lib';

/** List has no parameters: it outputs every pause record. */
export const description: INodeProperties[] = [];

/** List: every pause record and its state. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const all = await listPauses(store);
	return [all.map((state) => ({ json: state as unknown as IDataObject, pairedItem: { item: 0 } }))];
}
