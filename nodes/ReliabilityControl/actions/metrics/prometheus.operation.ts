import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { PROMETHEUS_CONTENT_TYPE, prometheusMetrics, type Store } from '../../../../lib';

/** Prometheus has no parameters: it reports the whole store. */
export const description: INodeProperties[] = [];

/** Prometheus: the store's metrics as Prometheus text, one item for a Respond to Webhook node. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const body = await prometheusMetrics(store);
	return [
		[
			{
				json: { statusCode: 200, contentType: PROMETHEUS_CONTENT_TYPE, body },
				pairedItem: { item: 0 },
			},
		],
	];
}
