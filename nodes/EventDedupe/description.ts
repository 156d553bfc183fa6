import type { INodeProperties } from 'n8n-workflow';
import { description as claimDescription } from './actions/claim.operation';
import { description as completeDescription } from './actions/complete.operation';
import { description as failExecutionDescription } from './actions/failExecution.operation';
import { description as purgeDescription } from './actions/purge.operation';
import { description as recoverDescription } from './actions/recover.operation';
import { description as releaseDescription } from './actions/release.operation';

/**
 * Outputs follow the operation: Claim routes to New and Duplicate, plus Stale when ordering is
 * on, and Invalid (items that failed validation, or with Continue On Fail items without a usable
 * event ID) unless invalid items fail the execution; Recover Crashed to Re-run and Give Up;
 * Settle Failed Execution to Parked and Not Kept; the other operations have one output.
 */
export const outputsExpression = `={{
	($parameter.operation ?? 'claim') === 'recover'
		? [{ type: 'main', displayName: 'Re-run' }, { type: 'main', displayName: 'Give Up' }]
		: $parameter.operation === 'failExecution'
		? [{ type: 'main', displayName: 'Parked' }, { type: 'main', displayName: 'Not Kept' }]
		: ($parameter.operation ?? 'claim') !== 'claim'
		? [{ type: 'main', displayName: 'Done' }]
		: [{ type: 'main', displayName: 'New' }, { type: 'main', displayName: 'Duplicate' }]
			.concat($parameter.checkOrder ? [{ type: 'main', displayName: 'Stale' }] : [])
			.concat($parameter.validate && $parameter.onInvalid === 'fail' ? [] : [{ type: 'main', displayName: 'Invalid' }])
}}`;

const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Claim',
			value: 'claim',
			action: 'Claim events',
			description: 'Route each event to New the first time its ID is seen, else to Duplicate',
		},
		{
			name: 'Complete',
			value: 'complete',
			action: 'Complete events',
			description: 'Mark claimed events done (claim mode "lease until complete")',
		},
		{
			name: 'Purge',
			value: 'purge',
			action: 'Purge expired events',
			description: 'Delete event IDs past their retention',
		},
		{
			name: 'Recover Crashed',
			value: 'recover',
			action: 'Recover items of crashed executions',
			description:
				'Take the items whose execution died (kept in the inbox) to run them again, or give them up to be parked',
		},
		{
			name: 'Release',
			value: 'release',
			action: 'Release claims',
			description:
				'Free the claims of a failed execution, or of given events, so a redelivery is new again',
		},
		{
			name: 'Settle Failed Execution',
			value: 'failExecution',
			action: 'Settle a failed execution',
			description:
				"For an error workflow: mark a failed or crashed execution's open writes and claims, and output its items to park",
		},
	],
	default: 'claim',
};

/** Event ID and Consumer: read by several operations, so they sit once, before the operations' own. */
const eventId: INodeProperties = {
	displayName: 'Event ID',
	name: 'eventId',
	type: 'string',
	required: true,
	default: '={{ $json.id }}',
	description:
		'The ID the sender gives the event; the same event delivered again carries the same ID',
	displayOptions: { show: { operation: ['claim', 'complete'] } },
};

const consumer: INodeProperties = {
	displayName: 'Consumer',
	name: 'consumer',
	type: 'string',
	default: '',
	placeholder: 'this workflow',
	description:
		'Event IDs are unique per consumer. Empty means this workflow, so two workflows may each process the same event once.',
	displayOptions: { show: { operation: ['claim', 'complete', 'release', 'purge'] } },
};

/** The shell's parameters and each operation's own, in the order the editor has always listed them. */
export const properties: INodeProperties[] = [
	operation,
	eventId,
	...completeDescription,
	consumer,
	...claimDescription,
	...releaseDescription,
	...purgeDescription,
	...recoverDescription,
	...failExecutionDescription,
];
