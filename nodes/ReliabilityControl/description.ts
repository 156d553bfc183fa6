import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../lib';
import { range } from '../shared/range';
import { description as itemTrace } from './actions/item/trace.operation';

/**
 * Operator controls as resources of one node, following n8n's resource/operation convention:
 * Pause (pause, resume, check, list), Heartbeat (beat, check), Console (serve: a webhook request
 * in, the console's page out), Metric (prometheus), Alert (compose), Item (trace: where an
 * item is) and Housekeeping (purge expired). Pause > Check routes items to Running or Paused;
 * every other operation has one output.
 */
export const outputsExpression = `={{
	$parameter.resource === 'pause' && $parameter.operation === 'check'
		? [{ type: 'main', displayName: 'Running' }, { type: 'main', displayName: 'Paused' }]
		: [{ type: 'main' }]
}}`;

const pauseOps = (...operations: string[]) => ({
	show: { resource: ['pause'], operation: operations },
});
const beatOps = (...operations: string[]) => ({
	show: { resource: ['heartbeat'], operation: operations },
});
const purgeOps = { show: { resource: ['housekeeping'], operation: ['purgeExpired'] } };

export const properties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Alert',
				value: 'alert',
				description:
					'Outcome alerts composed from dead letters, failed items and heartbeat changes',
			},
			{
				name: 'Console',
				value: 'console',
				description: 'The operator console, served through a Webhook and a Respond to Webhook node',
			},
			{ name: 'Heartbeat', value: 'heartbeat' },
			{
				name: 'Housekeeping',
				value: 'housekeeping',
				description: 'Keep the store the size of its retention',
			},
			{ name: 'Item', value: 'item', description: 'Where an item is: its trace by business ID' },
			{ name: 'Metric', value: 'metrics', description: 'Prometheus metrics of the store' },
			{ name: 'Pause', value: 'pause' },
		],
		default: 'pause',
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['pause'] } },
		options: [
			{
				name: 'Check',
				value: 'check',
				action: 'Check whether paused',
				description: 'Route items to Running or Paused',
			},
			{
				name: 'List',
				value: 'list',
				action: 'List pauses',
				description: 'Every integration and workflow that was paused, and its state',
			},
			{
				name: 'Pause',
				value: 'pause',
				action: 'Pause an integration or workflow',
				description: 'Stop calling it; its failed items are held, out of the review queue',
			},
			{
				name: 'Resume',
				value: 'resume',
				action: 'Resume an integration or workflow',
				description: 'Resume it; held items move to replay requested',
			},
		],
		default: 'pause',
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['heartbeat'] } },
		options: [
			{
				name: 'Beat',
				value: 'beat',
				action: 'Record a heartbeat',
				description: 'Say that this scheduled workflow ran',
			},
			{
				name: 'Check',
				value: 'check',
				action: 'Check heartbeats',
				description: 'Output heartbeats that became late or down, and recoveries, once each',
			},
		],
		default: 'beat',
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['alert'] } },
		options: [
			{
				name: 'Compose',
				value: 'compose',
				action: 'Compose an outcome alert',
				description:
					'One alert per item: workflow, item and impact first, then why, what already happened, the run link and the next action, secrets masked',
			},
		],
		default: 'compose',
	},
	{
		displayName: 'Mask Fields',
		name: 'alertMaskFields',
		type: 'string',
		default: '',
		placeholder: 'e.g. ssn, iban',
		description:
			'Comma-separated field names to mask in the alert text, besides the secrets always masked: authorization, cookies, API keys, passwords, secrets and tokens',
		displayOptions: { show: { resource: ['alert'], operation: ['compose'] } },
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['console'] } },
		options: [
			{
				name: 'Serve',
				value: 'serve',
				action: 'Serve a console page or action',
				description: 'Turn a webhook request into the console page (and perform its action)',
			},
		],
		default: 'serve',
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['metrics'] } },
		options: [
			{
				name: 'Prometheus',
				value: 'prometheus',
				action: 'Output metrics in prometheus text format',
				description:
					'Open dead letters, oldest age, parks per day, held items, pauses and heartbeats',
			},
		],
		default: 'prometheus',
	},
	{
		displayName: 'Request',
		name: 'request',
		type: 'json',
		default: '={{ $json }}',
		description:
			"The Webhook node's item: its headers (for the signed-in operator), query (the page) and body (the action)",
		displayOptions: { show: { resource: ['console'], operation: ['serve'] } },
	},
	{
		displayName: 'Options',
		name: 'consoleOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { resource: ['console'], operation: ['serve'] } },
		options: [
			{
				displayName: 'Chart Days',
				name: 'days',
				type: 'number',
				typeOptions: range(LIMITS.chartDays),
				default: 30,
				description: 'How many days the stats page charts',
			},
			{
				displayName: 'Operator Header',
				name: 'operatorHeader',
				type: 'string',
				default: '',
				placeholder: 'e.g. x-forwarded-user',
				description:
					'A header set by a signing-in proxy that names the operator; without it the Basic auth user name is the operator',
			},
			{ displayName: 'Title', name: 'title', type: 'string', default: 'Reliability console' },
		],
	},
	{
		displayName: 'Scope',
		name: 'scope',
		type: 'options',
		options: [
			{
				name: 'Integration',
				value: 'integration',
				description: 'A system the workflows call, e.g. crm',
			},
			{ name: 'Workflow', value: 'workflow' },
		],
		default: 'integration',
		displayOptions: pauseOps('pause', 'resume', 'check'),
	},
	{
		displayName: 'Name',
		name: 'pauseName',
		type: 'string',
		default: '',
		placeholder: 'e.g. crm',
		description: 'The integration (as Dead Letter Park and the write node name it) or the workflow',
		displayOptions: pauseOps('pause', 'resume', 'check'),
	},
	{
		displayName: 'Actor',
		name: 'actor',
		type: 'string',
		default: '',
		placeholder: 'e.g. maria@example.com',
		description: 'Who pauses or resumes; recorded. Required.',
		displayOptions: pauseOps('pause', 'resume'),
	},
	{
		displayName: 'Reason',
		name: 'reason',
		type: 'string',
		default: '',
		description: 'Why; required to pause',
		displayOptions: pauseOps('pause', 'resume'),
	},
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
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['housekeeping'] } },
		options: [
			{
				name: 'Purge Expired',
				value: 'purgeExpired',
				action: 'Purge expired rows from the store',
				description:
					'Delete key records, event IDs and closed dead letters past their retention, and old versions, history, stats and settled outbox messages; open, in-progress and held rows stay',
			},
		],
		default: 'purgeExpired',
	},
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: range(LIMITS.retentionDays),
		default: 30,
		description:
			'Delete entity versions untouched and outbox messages settled for longer than this. Key records, event IDs and dead letters keep the retention they were written with.',
		displayOptions: purgeOps,
	},
	{
		displayName: 'History Retention (Days)',
		name: 'historyRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.historyRetentionDays),
		default: 365,
		description: 'Delete pause and resume history older than this (current pauses always stay)',
		displayOptions: purgeOps,
	},
	{
		displayName: 'Stats Retention (Days)',
		name: 'statsRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.statsRetentionDays),
		default: 400,
		description:
			'Delete daily dead letter stats older than this. Keep it at least as long as the console and metrics look back.',
		displayOptions: purgeOps,
	},
	{
		displayName: 'Slice Size',
		name: 'sliceSize',
		type: 'number',
		typeOptions: range(LIMITS.purgeSliceSize),
		default: 10_000,
		description:
			'Rows deleted per statement. Each slice is its own short statement, so claims and writes never wait behind a purge.',
		displayOptions: purgeOps,
	},
	...itemTrace,
];
