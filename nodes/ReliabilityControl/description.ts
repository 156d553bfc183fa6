import type { INodeProperties } from 'n8n-workflow';
import { description as itemTrace } from './actions/item/trace.operation';
import { consoleProperties } from './parameters/console';
import { heartbeatProperties } from './parameters/heartbeat';
import { housekeepingProperties } from './parameters/housekeeping';
import { operationsProperties } from './parameters/operations';
import { pauseProperties } from './parameters/pause';

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
	...operationsProperties,
	...consoleProperties,
	...pauseProperties,
	...heartbeatProperties,
	...housekeepingProperties,
	...itemTrace,
];
