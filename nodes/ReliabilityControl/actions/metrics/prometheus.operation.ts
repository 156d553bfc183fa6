import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import {
	maskText,
	PROMETHEUS_CONTENT_TYPE,
	prometheusMetrics,
	ReliabilityError,
	type Store,
} from '../../../../lib';

/** Prometheus has no parameters: it reports the whole store. */
export const description: INodeProperties[] = [];

/**
 * Prometheus: the store's metrics as Prometheus text, one item for a Respond to Webhook node.
 * The metrics workflow keeps no execution in n8n (each would hold the scrape's token), so a store
 * that cannot be read is answered to the scraper as a 503 with the reason: Prometheus records
 * the failed scrape (`up` is 0), and the reason is in its target's last error.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	let answer: { statusCode: number; contentType: string; body: string };
	try {
		answer = {
			statusCode: 200,
			contentType: PROMETHEUS_CONTENT_TYPE,
			body: await prometheusMetrics(store),
		};
	} catch (error) {
		const hint = error instanceof ReliabilityError && error.hint ? ` ${error.hint}` : '';
		answer = {
			statusCode: 503,
			contentType: 'text/plain; charset=utf-8',
			body: `${maskText(`The metrics cannot read the reliability store: ${error instanceof Error ? error.message : String(error)}.${hint}`)}\n`,
		};
	}
	return [[{ json: answer, pairedItem: { item: 0 } }]];
}
