import type { INodeProperties } from 'n8n-workflow';
import * as alert from './actions/alert/Alert.resource';
import * as audit from './actions/audit/Audit.resource';
import * as consoleResource from './actions/console/Console.resource';
import * as drill from './actions/drill/Drill.resource';
import * as heartbeat from './actions/heartbeat/Heartbeat.resource';
import * as housekeeping from './actions/housekeeping/Housekeeping.resource';
import * as item from './actions/item/Item.resource';
import * as metrics from './actions/metrics/Metrics.resource';
import * as pause from './actions/pause/Pause.resource';
import * as setup from './actions/setup/Setup.resource';

/**
 * Operator controls as resources of one node, following n8n's resource/operation convention:
 * Pause (pause, resume, check, list), Heartbeat (beat, check), Console (serve: a webhook request
 * in, the console's page out), Metric (prometheus), Alert (compose, notify, sweep, list issues),
 * Item (trace: where an item is), Housekeeping (purge expired), Setup (install the bundled
 * workflows), Audit (the failure inventory and checklist of workflows) and Fire Drill (the
 * pre-launch failure tests on a webhook workflow). Pause > Check routes
 * items to Running or Paused, Alert > Notify and Sweep to Page or Channel; every other operation
 * has one output.
 */
export const outputsExpression = `={{
	$parameter.resource === 'pause' && $parameter.operation === 'check'
		? [{ type: 'main', displayName: 'Running' }, { type: 'main', displayName: 'Paused' }]
		: $parameter.resource === 'alert' && ['notify', 'sweep'].includes($parameter.operation)
			? [{ type: 'main', displayName: 'Page' }, { type: 'main', displayName: 'Channel' }]
			: [{ type: 'main' }]
}}`;

const resource: INodeProperties = {
	displayName: 'Resource',
	name: 'resource',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Alert',
			value: 'alert',
			description: 'Outcome alerts composed from dead letters, failed items and heartbeat changes',
		},
		{
			name: 'Audit',
			value: 'audit',
			description:
				'The failure inventory and reliability checklist of your workflows, with findings',
		},
		{
			name: 'Console',
			value: 'console',
			description: 'The operator console, served through a Webhook and a Respond to Webhook node',
		},
		{
			name: 'Fire Drill',
			value: 'drill',
			description: 'The pre-launch failure tests, run on one of your webhook workflows',
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
		{
			name: 'Setup',
			value: 'setup',
			description: 'Install or update the bundled workflows in this n8n',
		},
	],
	default: 'pause',
};

/**
 * The resource, each resource's operation and the parameters of its operations, in the order the
 * editor has always listed them.
 */
export const properties: INodeProperties[] = [
	resource,
	pause.operation,
	heartbeat.operation,
	alert.operation,
	...alert.description,
	consoleResource.operation,
	metrics.operation,
	...metrics.description,
	...consoleResource.description,
	...pause.description,
	...heartbeat.description,
	housekeeping.operation,
	...housekeeping.description,
	item.operation,
	...item.description,
	setup.operation,
	...setup.description,
	audit.operation,
	...audit.description,
	drill.operation,
	...drill.description,
];
