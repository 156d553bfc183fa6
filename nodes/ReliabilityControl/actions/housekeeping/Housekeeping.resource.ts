import type { INodeProperties } from 'n8n-workflow';
import * as purgeExpired from './purgeExpired.operation';

export { purgeExpired };

export const operation: INodeProperties = {
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
};

export const description: INodeProperties[] = [...purgeExpired.description];
