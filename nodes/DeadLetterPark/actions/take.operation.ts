import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	inRange,
	LIMITS,
	returnUnsettledTakes,
	settleUnsettledTakes,
	type Store,
	takeForReplay,
	toDeadLetter,
} from '../../../lib';
import { listLimit } from '../../shared/descriptions';
import { showingErrors } from '../../shared/router';
import { range } from '../../shared/range';
import { endedWithoutSuccess, whenRunEnds } from '../../shared/runEnd';

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
	const taker = `${String(this.getNodeParameter('taker', 0, '') || 'replay workflow').trim()} (execution ${this.getExecutionId()})`;
	// Its settings are item 0's: an engine error names that item, as List's and Stats' do.
	const records = await showingErrors(
		this,
		() =>
			takeForReplay(store, {
				taker,
				limit: inRange(this.getNodeParameter('takeLimit', 0, 100), LIMITS.listLimit),
				workflowId:
					String(this.getNodeParameter('takeWorkflowId', 0, '') ?? '').trim() || undefined,
				staleAfterMinutes: inRange(
					this.getNodeParameter('staleAfterMinutes', 0, 30),
					LIMITS.retakeAfterMinutes,
				),
			}),
		0,
	);
	settleWhenRunEnds(this, store, taker, records);
	return [
		records.map((record) => ({
			json: toDeadLetter(record) as IDataObject,
			pairedItem: { item: 0 },
		})),
	];
}

/**
 * Whatever the run that took the records did not settle is settled as it ends. Ended without
 * success (stopped, timed out, failed, a worker drained): asked for replay again, instead of
 * staying `being_fixed` until Retake After (which still brings them back when n8n dies with the
 * run). Ended in success: a record whose re-run gave no result the run could read (the
 * workflow ended on another path than a write's success, or returned nothing) and did not park
 * it again is settled by what the store says of its failed step (settleUnsettledTakes).
 */
function settleWhenRunEnds(
	context: IExecuteFunctions,
	store: Store,
	taker: string,
	records: Array<{ id: unknown; generation: string }>,
): void {
	if (records.length === 0) return;
	const taken = records.map((record) => ({ id: String(record.id), generation: record.generation }));
	whenRunEnds(context, async (run) => {
		if (run.status === 'waiting') return;
		if (endedWithoutSuccess(run))
			await returnUnsettledTakes(store, taken, {
				actor: taker,
				reason: `the replay run ended ${run.status ?? 'without success'} before it settled this record: asked for replay again`,
			});
		else await settleUnsettledTakes(store, taken, taker);
	});
}
