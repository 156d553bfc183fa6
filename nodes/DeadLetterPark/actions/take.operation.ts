import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { inRange, LIMITS, type Store, takeForReplay, toDeadLetter } from '../../../lib';
import { listLimit } from '../../shared/descriptions';
import { range } from '../../shared/range';
import { toNodeError } from '../../shared/store';

/** How many records one run takes, and when a record a dead run took is taken again. */
const properties: INodeProperties[] = [
	{
		displayName: 'Taker',
		name: 'taker',
		type: 'string',
		default: 'replay workflow',
		description: 'Who takes the records; recorded in the audit trail with this execution',
	},
	listLimit('takeLimit', 100),
	{
		displayName: 'Workflow ID',
		name: 'takeWorkflowId',
		type: 'string',
		default: '',
		description: 'Only records of this workflow; empty for all',
	},
	{
		displayName: 'Retake After (Minutes)',
		name: 'staleAfterMinutes',
		type: 'number',
		typeOptions: range(LIMITS.retakeAfterMinutes),
		default: 30,
		description:
			'A record another replay run took this long ago without finishing (that run died) is taken again',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['take'] } }, properties);

/**
 * Take for Replay: takes the records asked to be replayed, atomically, for this run (two
 * overlapping replay runs never take one record), and outputs each record with its payload and
 * the generation that Update Status must present to settle it. Runs once, whatever the input.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	try {
		const records = await takeForReplay(store, {
			taker: `${String(this.getNodeParameter('taker', 0, '') || 'replay workflow').trim()} (execution ${this.getExecutionId()})`,
			limit: inRange(this.getNodeParameter('takeLimit', 0, 100), LIMITS.listLimit),
			workflowId: String(this.getNodeParameter('takeWorkflowId', 0, '') ?? '').trim() || undefined,
			staleAfterMinutes: inRange(
				this.getNodeParameter('staleAfterMinutes', 0, 30),
				LIMITS.retakeAfterMinutes,
			),
		});
		return [
			records.map((record) => ({
				json: toDeadLetter(record) as IDataObject,
				pairedItem: { item: 0 },
			})),
		];
	} catch (error) {
		throw toNodeError(this, error);
	}
}
