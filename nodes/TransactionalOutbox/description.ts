import type { INodeProperties } from 'n8n-workflow';
import { description as completeDescription } from './actions/complete.operation';
import { description as failDescription } from './actions/fail.operation';
import { description as purgeDescription } from './actions/purge.operation';
import { description as takeDescription } from './actions/take.operation';
import { description as writeDescription } from './actions/write.operation';

/**
 * Write runs the item's SQL and adds its outbox messages in one transaction; a relay takes the
 * messages (Take), sends them with Idempotent HTTP Write and settles them (Complete, Fail).
 */
const operation: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Complete',
			value: 'complete',
			action: 'Complete sent messages',
			description: 'Mark messages sent, if the taker still owns them',
		},
		{
			name: 'Fail',
			value: 'fail',
			action: 'Fail messages',
			description:
				'Schedule a retry after a transient failure, hold it while its destination is paused; park it as a dead letter past the attempt cap or on a permanent failure',
		},
		{
			name: 'Purge',
			value: 'purge',
			action: 'Purge settled messages',
			description: 'Delete messages done or dead for longer than the retention',
		},
		{
			name: 'Take',
			value: 'take',
			action: 'Take pending messages',
			description: 'Claim messages to send under a lease, in order per ordering key',
		},
		{
			name: 'Write',
			value: 'write',
			action: 'Write rows and messages in one transaction',
			description:
				'Run SQL statements and add outbox messages in one transaction: both commit, or neither',
		},
	],
	default: 'write',
};

/** Where the outbox lives: every operation reads it. */
const outboxDatabase: INodeProperties = {
	displayName: 'Outbox Database',
	name: 'outboxDatabase',
	type: 'options',
	noDataExpression: true,
	options: [
		{
			name: 'Reliability Store',
			value: 'store',
			description: "The store's database; the business tables must live there too",
		},
		{
			name: 'Postgres Credential',
			value: 'postgres',
			description:
				'The database of your business tables; the outbox table is created there in its own schema',
		},
	],
	default: 'store',
	description:
		'Where the outbox table lives. It must be the database of the business tables, so both change in one transaction. Every operation of one outbox uses the same choice.',
};

const outboxSchema: INodeProperties = {
	displayName: 'Outbox Schema',
	name: 'outboxSchema',
	type: 'string',
	default: 'n8n_reliability',
	description:
		'Schema for the outbox table in that database; created and migrated on first use. Lowercase letters, digits and underscores.',
	displayOptions: { show: { outboxDatabase: ['postgres'] } },
};

/** Which message a settle is about, and under which generation: Complete and Fail read them. */
const messageId: INodeProperties = {
	displayName: 'Message ID',
	name: 'messageId',
	type: 'string',
	default: '={{ $json.id }}',
	description: 'The ID of the message, as Take output it',
	displayOptions: { show: { operation: ['complete', 'fail'] } },
};

const generation: INodeProperties = {
	displayName: 'Generation',
	name: 'generation',
	type: 'string',
	default: '={{ $json.generation }}',
	description:
		'The generation Take output with the message. A settle for an older generation is refused and reported as superseded.',
	displayOptions: { show: { operation: ['complete', 'fail'] } },
};

/** The shell's parameters and each operation's own, in the order the editor has always listed them. */
export const properties: INodeProperties[] = [
	operation,
	outboxDatabase,
	outboxSchema,
	...writeDescription,
	...takeDescription,
	messageId,
	generation,
	...completeDescription,
	...failDescription,
	...purgeDescription,
];
