import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../../lib';
import { range } from '../../shared/range';

const purgeOps = { show: { resource: ['housekeeping'], operation: ['purgeExpired'] } };

/** Housekeeping > Purge Expired: how long each kind of row is kept, and the slice size. */
export const housekeepingProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['housekeeping'] } },
		options: [
			{
				name: 'Purge Expired',
				value: 'purgeExpired',
				action: 'Purge expired rows from the store',
				description:
					'Delete key records, event IDs and closed dead letters past their retention, and old versions, history, stats and settled outbox messages; open, in-progress and held rows stay',
			},
		],
		default: 'purgeExpired',
	},
	{
		displayName: 'Retention (Days)',
		name: 'retentionDays',
		type: 'number',
		typeOptions: range(LIMITS.retentionDays),
		default: 30,
		description:
			'Delete entity versions untouched and outbox messages settled for longer than this. Key records, event IDs and dead letters keep the retention they were written with.',
		displayOptions: purgeOps,
	},
	{
		displayName: 'History Retention (Days)',
		name: 'historyRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.historyRetentionDays),
		default: 365,
		description: 'Delete pause and resume history older than this (current pauses always stay)',
		displayOptions: purgeOps,
	},
	{
		displayName: 'Stats Retention (Days)',
		name: 'statsRetentionDays',
		type: 'number',
		typeOptions: range(LIMITS.statsRetentionDays),
		default: 400,
		description:
			'Delete daily dead letter stats older than this. Keep it at least as long as the console and metrics look back.',
		displayOptions: purgeOps,
	},
	{
		displayName: 'Slice Size',
		name: 'sliceSize',
		type: 'number',
		typeOptions: range(LIMITS.purgeSliceSize),
		default: 10_000,
		description:
			'Rows deleted per statement. Each slice is its own short statement, so claims and writes never wait behind a purge.',
		displayOptions: purgeOps,
	},
];
