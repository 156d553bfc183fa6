import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import { storeFor } from '../../shared/store';
import * as alert from './alert.operations';
import * as consoleOps from './console.operations';
import * as heartbeat from './heartbeat.operations';
import * as housekeeping from './housekeeping.operations';
import * as itemTrace from './item/trace.operation';
import * as pause from './pause.operations';

const resources = {
	alert: { compose: alert.compose },
	pause: { pause: pause.pause, resume: pause.resume, check: pause.check, list: pause.list },
	heartbeat: { beat: heartbeat.beat, check: heartbeat.check },
	housekeeping: { purgeExpired: housekeeping.purge },
	console: { serve: consoleOps.serve },
	metrics: { prometheus: consoleOps.prometheus },
	item: { trace: itemTrace.execute },
} as const;

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
	// Composing an alert needs no store (and its node has no store credential).
	const store = resource === 'alert' ? undefined : await storeFor(this);
	return await handler.call(this, store, this.getInputData());
}
