import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { type Store, sweepAlerts } from '../../../../lib';
import { byRoute } from './notify.operation';

/** Sweep has no parameters: each issue keeps the interval and ceiling it was opened with. */
export const description: INodeProperties[] = [];

/**
 * Sweep (every minute, in the bundled Recover workflow): a `resolve` for each issue none of whose
 * items is open any more, the updates that waited out their interval, and one summary per owner
 * of the alerts the hourly ceiling held back. Outputs Page and Channel, for the Alert workflow
 * to send.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const notifications = await sweepAlerts(store);
	return byRoute(notifications.map((notification) => ({ notification, index: 0 })));
}
