import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { showingErrors } from '../../shared/router';
import { storeFor } from '../../shared/store';
import * as alert from './alert/Alert.resource';
import * as audit from './audit/Audit.resource';
import * as consoleResource from './console/Console.resource';
import * as drill from './drill/Drill.resource';
import * as heartbeat from './heartbeat/Heartbeat.resource';
import * as housekeeping from './housekeeping/Housekeeping.resource';
import * as item from './item/Item.resource';
import * as metrics from './metrics/Metrics.resource';
import * as pause from './pause/Pause.resource';
import * as setup from './setup/Setup.resource';

const resources = {
	alert: {
		compose: alert.compose.execute,
		notify: alert.notify.execute,
		sweep: alert.sweep.execute,
		listIssues: alert.listIssues.execute,
	},
	pause: {
		pause: pause.pause.execute,
		resume: pause.resume.execute,
		check: pause.check.execute,
		list: pause.list.execute,
	},
	heartbeat: { beat: heartbeat.beat.execute, check: heartbeat.check.execute },
	housekeeping: { purgeExpired: housekeeping.purgeExpired.execute },
	console: { serve: consoleResource.serve.execute },
	metrics: { prometheus: metrics.prometheus.execute },
	item: { trace: item.trace.execute },
	setup: { installWorkflows: setup.installWorkflows.execute },
	audit: { generate: audit.generate.execute },
	drill: { run: drill.run.execute },
} as const;

/**
 * Picks the operation named by the `resource` and `operation` parameters and runs it. The one
 * place where what an operation throws becomes the error n8n shows, as for the other nodes.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as keyof typeof resources;
	const operation = this.getNodeParameter('operation', 0) as string;
	const handler = (resources[resource] as Record<string, unknown> | undefined)?.[operation] as
		((this: IExecuteFunctions, ...args: unknown[]) => Promise<INodeExecutionData[][]>) | undefined;
	if (!handler)
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of "${resource}" is not supported`,
		);
	// Composing an alert needs no store (and its node may have no store credential).
	return await showingErrors(this, async () =>
		handler.call(
			this,
			resource === 'alert' && operation === 'compose' ? undefined : await storeFor(this),
			this.getInputData(),
		),
	);
}
