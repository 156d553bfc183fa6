import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { DEFAULT_HOUSEKEEPING, purgeExpired, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';

/**
 * Purge Expired: every table of the store purged by its retention, once per run (parameters of
 * the first item); outputs the rows deleted per table and their total.
 */
export async function purge(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	try {
		const started = Date.now();
		const deleted = await purgeExpired(store, {
			retentionDays: this.getNodeParameter(
				'retentionDays',
				0,
				DEFAULT_HOUSEKEEPING.retentionDays,
			) as number,
			historyRetentionDays: this.getNodeParameter(
				'historyRetentionDays',
				0,
				DEFAULT_HOUSEKEEPING.historyRetentionDays,
			) as number,
			statsRetentionDays: this.getNodeParameter(
				'statsRetentionDays',
				0,
				DEFAULT_HOUSEKEEPING.statsRetentionDays,
			) as number,
			sliceSize: this.getNodeParameter('sliceSize', 0, DEFAULT_HOUSEKEEPING.sliceSize) as number,
		});
		const total = Object.values(deleted).reduce((sum, n) => sum + n, 0);
		const json: IDataObject = { deleted: { ...deleted }, total, durationMs: Date.now() - started };
		return [[{ json, pairedItem: { item: 0 } }]];
	} catch (error) {
		throw toNodeError(this, error, 0);
	}
}
