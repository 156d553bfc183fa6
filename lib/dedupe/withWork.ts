import type { Store, Transaction } from '../store';
import { checkedEventId } from './eventIds';
import { ConfigurationError, ItemError } from '../errors';
import { ClaimOutcome } from './outcomes';
import { closeDoneEventLetters } from '../deadletter/status';
import { claimWithWorkSql, eventStatusSql } from './sql';

/**
 * Dedupe in the same transaction as the work (seed 001's `handleOnce`): the event is claimed,
 * done for good, inside the transaction that does the work. A duplicate does nothing; work that
 * fails rolls the claim back with it, so the event is unclaimed and a redelivery runs it; a
 * crash between the claim and the work cannot be observed, since neither committed.
 */
export async function claimWithWork(
	tx: Transaction,
	store: Store,
	claim: {
		index: number;
		consumer: string;
		eventId: string;
		workflowId?: string;
		executionId: string;
		retentionDays: number;
	},
): Promise<typeof ClaimOutcome.new | typeof ClaimOutcome.duplicate> {
	const consumer = checkedEventId(claim.consumer);
	if ('problem' in consumer || consumer.id !== claim.consumer)
		throw new ConfigurationError(
			`Consumer ${JSON.stringify(claim.consumer)} cannot be used: it ${'problem' in consumer ? consumer.problem.replace('has an event ID', 'is a name') : 'is longer than 255 characters'}`,
			'Set Consumer to a short name of letters, digits and punctuation (empty means this workflow).',
		);
	const checked = checkedEventId(claim.eventId);
	if ('problem' in checked)
		throw new ItemError(
			`Item ${claim.index} ${checked.problem}`,
			claim.index,
			'Set Event ID to the unique ID of the event as text or a number. Nothing was written.',
		);
	const rows = await tx.query(
		claimWithWorkSql(store, {
			consumer: claim.consumer,
			eventId: checked.id,
			workflowId: claim.workflowId ?? null,
			executionId: claim.executionId,
			retentionDays: claim.retentionDays,
		}),
	);
	if (rows.length > 0) {
		// Letters of this event from earlier deliveries are done with once the work commits.
		await closeDoneEventLetters(store, claim.executionId, tx);
		return ClaimOutcome.new;
	}
	// Not claimed: done before, or held by an Event Dedupe claim whose lease is still live.
	const [held] = await tx.query<{ execution_id: string | null }>(
		eventStatusSql(store, { consumer: claim.consumer, eventId: checked.id }),
	);
	if (held)
		throw new ItemError(
			`Item ${claim.index}: event ${checked.id} is being processed by execution ${held.execution_id ?? 'unknown'}`,
			claim.index,
			'Run this item again after that execution ends; its claim lapses with its lease. Nothing was written.',
		);
	return ClaimOutcome.duplicate;
}
