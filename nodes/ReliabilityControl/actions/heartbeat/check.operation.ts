import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { checkHeartbeats, type Store } from '../../../../lib';

/** What Check outputs. */
const properties: INodeProperties[] = [
	{
		displayName: 'Output All Heartbeats',
		name: 'outputAll',
		type: 'boolean',
		default: false,
		description: 'Whether to output every heartbeat with its state, not only the changes to report',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['heartbeat'], operation: ['check'] } },
	properties,
);

/** Check: the heartbeats that became late or down, and recoveries, each reported once. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const outputAll = this.getNodeParameter('outputAll', 0, false) as boolean;
	const result = await checkHeartbeats(store);
	const rows = outputAll
		? result.heartbeats.map((h) => ({
				...h,
				event: result.changes.find((c) => c.name === h.name)?.event ?? null,
			}))
		: result.changes;
	return [rows.map((row) => ({ json: row as unknown as IDataObject, pairedItem: { item: 0 } }))];
}
