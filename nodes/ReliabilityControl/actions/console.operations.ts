import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import {
	type ConsoleRequest,
	handleConsoleRequest,
	PROMETHEUS_CONTENT_TYPE,
	prometheusMetrics,
	type Store,
} from '../../../lib';
import { toNodeError } from '../../shared/store';

/**
 * Serve: one console response per incoming webhook item (its headers, query and body), as
 * `statusCode`, `contentType` and `body` for a Respond to Webhook node. `replayRequested`
 * says how many records the request set to replay, so the workflow can run the Replay
 * workflow at once instead of at its next schedule.
 */
export async function serve(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const out: INodeExecutionData[] = [];
	for (let index = 0; index < items.length; index++) {
		const request = this.getNodeParameter('request', index, {}) as unknown;
		if (typeof request !== 'object' || request === null || Array.isArray(request)) {
			throw new NodeOperationError(this.getNode(), `Item ${index}: the request is not an object`, {
				itemIndex: index,
				description:
					"Set Request to the Webhook node's item, e.g. {{ $json }} (it has headers, query and body).",
			});
		}
		const options = this.getNodeParameter('consoleOptions', index, {}) as {
			operatorHeader?: string;
			title?: string;
			days?: number;
			teams?: string | Record<string, string[]>;
		};
		try {
			const response = await handleConsoleRequest(store, request as ConsoleRequest, {
				operatorHeader: options.operatorHeader?.trim() || undefined,
				title: options.title?.trim() || undefined,
				days: options.days,
				teams: options.teams,
				baseUrl: this.getInstanceBaseUrl(),
			});
			out.push({ json: response as unknown as IDataObject, pairedItem: { item: index } });
		} catch (error) {
			throw toNodeError(this, error, index);
		}
	}
	return [out];
}

/** Prometheus: the store's metrics as Prometheus text, one item for a Respond to Webhook node. */
export async function prometheus(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const body = await prometheusMetrics(store).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	return [
		[
			{
				json: { statusCode: 200, contentType: PROMETHEUS_CONTENT_TYPE, body },
				pairedItem: { item: 0 },
			},
		],
	];
}
