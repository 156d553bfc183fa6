import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	type AlertSettings,
	type ImpactClass,
	inRange,
	LIMITS,
	type Notification,
	notifyAlerts,
	parseMaskFields,
	parseWorkingHours,
	type Store,
} from '../../../../lib';
import { range } from '../../../shared/range';
import { alertMaskFields } from '../../../shared/descriptions';

const properties: INodeProperties[] = [
	{
		displayName: 'Impact Classes',
		name: 'impactClasses',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Rule',
		default: {},
		description:
			'Which items page someone at any hour (money, customer-facing) and which go to the owner in working hours or to the daily digest (internal). Items no rule names go to the channel at any hour.',
		options: [
			{
				displayName: 'Rule',
				name: 'rule',
				values: [
					{
						displayName: 'Integration or Workflow',
						name: 'match',
						type: 'string',
						default: '',
						placeholder: 'e.g. crm',
						description: 'An integration name, a workflow ID or a workflow name',
					},
					{
						displayName: 'Impact',
						name: 'impact',
						type: 'options',
						options: [
							{ name: 'Money', value: 'money' },
							{ name: 'Customer-Facing', value: 'customer' },
							{ name: 'Internal', value: 'internal' },
						],
						default: 'internal',
					},
				],
			},
		],
	},
	{
		displayName: 'Owners',
		name: 'owners',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Owner',
		default: {},
		description:
			"Each owner's working hours: internal items outside them wait for the daily digest. An owner not listed is always in hours.",
		options: [
			{
				displayName: 'Owner',
				name: 'owner',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						placeholder: 'e.g. sales-ops',
						description: "The owner as Dead Letter Park's Owner names it",
					},
					{
						displayName: 'Working Hours',
						name: 'workingHours',
						type: 'string',
						default: 'Mon-Fri 09:00-17:00',
					},
					{
						displayName: 'Time Zone',
						name: 'timeZone',
						type: 'string',
						default: 'UTC',
						placeholder: 'e.g. Europe/Berlin',
					},
				],
			},
		],
	},
	{
		displayName: 'Update Interval (Minutes)',
		name: 'updateIntervalMinutes',
		type: 'number',
		typeOptions: range(LIMITS.alertUpdateMinutes),
		default: 15,
		description:
			"Later items of an issue update its alert's count at most this often; its first item alerts at once",
	},
	{
		displayName: 'Alert Ceiling per Owner per Hour',
		name: 'ceilingPerHour',
		type: 'number',
		typeOptions: range(LIMITS.alertCeilingPerHour),
		default: 30,
		description:
			'Past it, nothing more is sent to the owner that hour; one summary says how many were held back. Nothing is dropped from the store.',
	},
	alertMaskFields,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['alert'], operation: ['notify'] } },
	properties,
);

/** The Notify settings of this node, checked: a bad owner or time zone names itself. */
function alertSettings(context: IExecuteFunctions): AlertSettings {
	const rules = (
		context.getNodeParameter('impactClasses', 0, {}) as {
			rule?: Array<{ match?: string; impact?: string }>;
		}
	).rule;
	const owners = (
		context.getNodeParameter('owners', 0, {}) as {
			owner?: Array<{ name?: string; workingHours?: string; timeZone?: string }>;
		}
	).owner;
	return {
		impactRules: (rules ?? [])
			.filter((r) => r.match?.trim())
			.map((r) => ({ match: r.match!.trim(), impact: (r.impact ?? 'internal') as ImpactClass })),
		owners: (owners ?? [])
			.filter((o) => o.name?.trim())
			.map((o) =>
				parseWorkingHours(
					o.name!.trim(),
					o.workingHours ?? 'Mon-Fri 09:00-17:00',
					o.timeZone?.trim() || 'UTC',
				),
			),
		updateIntervalSeconds:
			inRange(context.getNodeParameter('updateIntervalMinutes', 0, 15), LIMITS.alertUpdateMinutes) *
			60,
		ceilingPerHour: inRange(
			context.getNodeParameter('ceilingPerHour', 0, 30),
			LIMITS.alertCeilingPerHour,
		),
		consoleUrl: `${context.getInstanceBaseUrl().replace(/\/+$/, '')}/webhook/reliability-console`,
		maskFields: parseMaskFields(context.getNodeParameter('alertMaskFields', 0, '')),
	};
}

/** Notifications by route: the node's Page and Channel outputs. */
export function byRoute(
	notifications: Array<{ notification: Notification; index: number }>,
): INodeExecutionData[][] {
	const out: INodeExecutionData[][] = [[], []];
	for (const { notification, index } of notifications)
		out[notification.route === 'page' ? 0 : 1].push({
			json: notification as unknown as IDataObject,
			pairedItem: { item: index },
		});
	return out;
}

/**
 * Notify: each parked item joins its cause's open issue; the first of an issue alerts, later
 * ones update its count at most once per interval; held items alert nothing; items routed to
 * the digest wait for it. An input that already is an alert (the Sweep's, handed over by the
 * Recover workflow) goes out as it is. Outputs Page and Channel.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const ready: Array<{ notification: Notification; index: number }> = [];
	const toGroup: Array<{ json: unknown; index: number }> = [];
	items.forEach((item, index) => {
		if ((item.json as { kind?: unknown }).kind === 'alert')
			ready.push({ notification: item.json as unknown as Notification, index });
		else toGroup.push({ json: item.json, index });
	});
	if (toGroup.length > 0) {
		const results = await notifyAlerts(
			store,
			toGroup.map((g) => g.json),
			alertSettings(this),
		);
		for (const result of results)
			for (const notification of result.notifications)
				ready.push({ notification, index: toGroup[result.index].index });
	}
	return byRoute(ready.sort((a, b) => a.index - b.index));
}
