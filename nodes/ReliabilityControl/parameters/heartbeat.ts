import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';

const beatOps = (...operations: string[]) => ({
	show: { resource: ['heartbeat'], operation: operations },
});

/** Heartbeat: its name and schedule, and what Check outputs. */
export const heartbeatProperties: INodeProperties[] = [
	{
		displayName: 'Heartbeat Name',
		name: 'heartbeatName',
		type: 'string',
		default: '={{ $workflow.name }}',
		displayOptions: beatOps('beat'),
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
		displayOptions: beatOps('beat'),
	},
	{
		displayName: 'Period (Minutes)',
		name: 'periodMinutes',
		type: 'number',
		typeOptions: range(LIMITS.heartbeatPeriodMinutes),
		default: 60,
		description: 'How often the workflow runs',
		displayOptions: {
			show: { resource: ['heartbeat'], operation: ['beat'], schedule: ['period'] },
		},
	},
	{
		displayName: 'Cron',
		name: 'cron',
		type: 'string',
		default: '0 6 * * *',
		description:
			'Minute hour day-of-month month day-of-week, in UTC, as the Schedule Trigger runs it',
		displayOptions: { show: { resource: ['heartbeat'], operation: ['beat'], schedule: ['cron'] } },
	},
	{
		displayName: 'Grace (Minutes)',
		name: 'graceMinutes',
		type: 'number',
		typeOptions: range(LIMITS.heartbeatGraceMinutes),
		default: 10,
		description: 'How long after the due time a beat is late before it counts as down',
		displayOptions: beatOps('beat'),
	},
	{
		displayName: 'Output All Heartbeats',
		name: 'outputAll',
		type: 'boolean',
		default: false,
		description: 'Whether to output every heartbeat with its state, not only the changes to report',
		displayOptions: beatOps('check'),
	},
];
