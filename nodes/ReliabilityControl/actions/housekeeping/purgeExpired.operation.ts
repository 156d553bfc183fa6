import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { DEFAULT_HOUSEKEEPING, LIMITS, purgeExpired, type Store } from '../../../../lib';
import { range } from '../../../shared/range';
import { retentionDays } from '../../../shared/descriptions';

/** How long each kind of row is kept, the slice size and the rest between slices. */
const properties: INodeProperties[] = [
	retentionDays(
		30,
		'Delete entity versions untouched and outbox messages settled for longer than this. Key records, event IDs and dead letters keep the retention they were written with.',
	),
	{
		displayName: 'History Retention (Days)',
		name: 'historyRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.historyRetentionDays),
		default: 365,
		description:
			'Delete pause, resume and fire drill history older than this (current pauses and drills always stay)',
	},
	{
		displayName: 'Stats Retention (Days)',
		name: 'statsRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.statsRetentionDays),
		default: 400,
		description:
			'Delete daily dead letter stats older than this. Keep it at least as long as the console and metrics look back.',
	},
	{
		displayName: 'Slice Size',
		name: 'sliceSize',
		type: 'number',
		typeOptions: range(LIMITS.purgeSliceSize),
		default: 1_000,
		description:
			'Rows deleted per statement. Each slice is its own short statement, so claims and writes never wait behind a purge; small slices keep the work a claim or write shares the CPU with short.',
	},
	{
		displayName: 'Rest Between Slices (%)',
		name: 'restPercent',
		type: 'number',
		typeOptions: range(LIMITS.purgeRestPercent),
		default: 100,
		description:
			"After each full slice, wait this share of the time the slice took before the next, so live claims and writes keep the database and the CPU while a large purge runs. 100 halves the purge's load and doubles its duration; 0 purges flat out.",
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['housekeeping'], operation: ['purgeExpired'] } },
	properties,
);

/**
 * Purge Expired: every table of the store purged by its retention, once per run (parameters of
 * the first item); outputs the rows deleted per table and their total. A stopped execution stops
 * the purge before its next slice.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const started = Date.now();
	const deleted = await purgeExpired(
		store,
		{
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
			restPercent: this.getNodeParameter(
				'restPercent',
				0,
				DEFAULT_HOUSEKEEPING.restPercent,
			) as number,
		},
		this.getExecutionCancelSignal?.(),
	);
	const total = Object.values(deleted).reduce((sum, n) => sum + n, 0);
	const json: IDataObject = { deleted: { ...deleted }, total, durationMs: Date.now() - started };
	return [[{ json, pairedItem: { item: 0 } }]];
}
