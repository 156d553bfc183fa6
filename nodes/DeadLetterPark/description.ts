import type { INodeProperties } from 'n8n-workflow';
import { description as compensateDescription } from './actions/compensate.operation';
import { description as getDescription } from './actions/get.operation';
import { description as listDescription } from './actions/list.operation';
import { description as parkDescription } from './actions/park.operation';
import { description as purgeDescription } from './actions/purge.operation';
import { description as replayDescription } from './actions/replay.operation';
import { description as statsDescription } from './actions/stats.operation';
import { description as takeDescription } from './actions/take.operation';
import { description as updateStatusDescription } from './actions/updateStatus.operation';

const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Compensate',
			value: 'compensate',
			action: 'Compensate a dead letter',
			description:
				'Reverse the steps the item had already taken, newest first, each compensating request sent once, with the answers in the audit trail',
		},
		{
			name: 'Get',
			value: 'get',
			action: 'Get dead letters',
			description: 'Get parked items by ID or idempotency key, with their audit history',
		},
		{
			name: 'List',
			value: 'list',
			action: 'List dead letters',
			description: 'Search parked items by status, workflow, step, reason, owner and age',
		},
		{
			name: 'Park',
			value: 'park',
			action: 'Park items',
			description: 'Store failed items with everything needed to fix and replay them',
		},
		{
			name: 'Purge',
			value: 'purge',
			action: 'Purge expired dead letters',
			description: 'Delete closed records past their retention',
		},
		{
			name: 'Replay',
			value: 'replay',
			action: 'Request a replay',
			description: 'Mark parked items replay requested and output their payloads to re-run',
		},
		{
			name: 'Stats',
			value: 'stats',
			action: 'Get dead letter stats',
			description: 'Parked per day, open by status, wait times, top reasons',
		},
		{
			name: 'Take for Replay',
			value: 'take',
			action: 'Take dead letters for replay',
			description:
				'Atomically take the items asked to be replayed (never one item for two runs) and output them with their payloads',
		},
		{
			name: 'Update Status',
			value: 'updateStatus',
			action: 'Update the status of a dead letter',
			description: 'Move a parked item to a new status, recording who and why',
		},
	],
	default: 'park',
};

/** The shell's parameters and each operation's own, in the order the editor has always listed them. */
export const properties: INodeProperties[] = [
	operation,
	...parkDescription,
	...getDescription,
	...updateStatusDescription,
	...replayDescription,
	...compensateDescription,
	...takeDescription,
	...listDescription,
	...statsDescription,
	...purgeDescription,
];
