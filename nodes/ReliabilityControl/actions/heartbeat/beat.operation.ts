import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { beat as recordBeat, inRange, LIMITS, type Store } from '../../../../lib';
import { range } from '../../../shared/range';

/** The heartbeat's name and schedule. */
const properties: INodeProperties[] = [
	{
		displayName: 'Heartbeat Name',
		name: 'heartbeatName',
		type: 'string',
		default: '={{ $workflow.name }}',
	},
	{
		displayName: 'Schedule',
		name: 'schedule',
		type: 'options',
		options: [
			{ name: 'Every Period', value: 'period' },
			{ name: 'Cron (UTC)', value: 'cron' },
		],
		default: 'period',
	},
	{
		displayName: 'Period (Minutes)',
		name: 'periodMinutes',
		type: 'number',
		typeOptions: range(LIMITS.heartbeatPeriodMinutes),
		default: 60,
		description: 'How often the workflow runs',
		displayOptions: { show: { schedule: ['period'] } },
	},
	{
		displayName: 'Cron',
		name: 'cron',
		type: 'string',
		default: '0 6 * * *',
		description:
			'Minute hour day-of-month month day-of-week, in UTC, as the Schedule Trigger runs it',
		displayOptions: { show: { schedule: ['cron'] } },
	},
	{
		displayName: 'Grace (Minutes)',
		name: 'graceMinutes',
		type: 'number',
		typeOptions: range(LIMITS.heartbeatGraceMinutes),
		default: 10,
		description: 'How long after the due time a beat is late before it counts as down',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['heartbeat'], operation: ['beat'] } },
	properties,
);

/** Beat: one beat per run (parameters of the first item); outputs the heartbeat's status. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const schedule = this.getNodeParameter('schedule', 0, 'period') as string;
	// Checked in the units the node shows, before anything is stored.
	const periodMinutes =
		schedule === 'period'
			? inRange(this.getNodeParameter('periodMinutes', 0, 60), LIMITS.heartbeatPeriodMinutes, 0)
			: undefined;
	const graceMinutes = inRange(
		this.getNodeParameter('graceMinutes', 0, 10),
		LIMITS.heartbeatGraceMinutes,
		0,
	);
	const cron = schedule === 'cron' ? this.getNodeParameter('cron', 0, '') : undefined;
	const status = await recordBeat(store, {
		name: String(this.getNodeParameter('heartbeatName', 0, '') ?? ''),
		periodSeconds: periodMinutes === undefined ? undefined : periodMinutes * 60,
		cron: cron === undefined ? undefined : String(cron),
		graceSeconds: graceMinutes * 60,
	});
	return [[{ json: status as unknown as IDataObject, pairedItem: { item: 0 } }]];
}
