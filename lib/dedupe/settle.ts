import { closeDoneEventLetters } from '../deadletter/status';
import { type Store } from '../store';
import { type SettleResult } from './outcomes';
import {
	completeEventsSql,
	failExecutionClaimsSql,
	releaseEventsSql,
	releaseExecutionSql,
} from './sql';

/** Settling claims: complete them for good, or release them so the event can be claimed again. */

/**
 * Marks events done for good, if `executionId` holds their claims (after a takeover the old
 * owner completes nothing). One result per event: done now, or why not (its owner, its status).
 */
export async function completeEvents(
	store: Store,
	consumer: string,
	eventIds: string[],
	executionId: string,
): Promise<SettleResult[]> {
	const rows = await store.query<{
		event_id: string;
		changed: boolean;
		owner: string | null;
		status: string;
	}>(completeEventsSql(store, { consumer, eventIds, executionId }));
	// Letters of these items from earlier deliveries (failed, stopped, crashed) are done with.
	if (rows.some((row) => row.changed)) await closeDoneEventLetters(store, executionId);
	const byId = new Map(rows.map((row) => [row.event_id, row]));
	return eventIds.map((eventId) => {
		const row = byId.get(eventId);
		return {
			eventId,
			changed: row?.changed ?? false,
			owner: row?.owner ?? null,
			status: row?.status ?? null,
		};
	});
}

/**
 * Frees the claims a (failed) execution made, so a redelivery or a replay is new again. Events
 * the execution had completed stay done: their work finished. Inbox claims keep their items:
 * they are failed, which a redelivery claims again just the same.
 */
export async function releaseExecutionClaims(store: Store, executionId: string): Promise<number> {
	// Dropped by this rule: a redelivery is new, and no letter is parked for them.
	const failed = await store.execute(
		failExecutionClaimsSql(store, {
			executionId,
			message: `released by execution ${executionId}`,
			dropped: true,
		}),
	);
	const rows = await store.query<{ released: number }>(releaseExecutionSql(store, { executionId }));
	return rows[0].released + failed.rowCount;
}

/**
 * Frees the claims of given events that `heldBy` holds (never a completed one, never another
 * execution's: fenced by the owner); returns the IDs released.
 */
export async function releaseEvents(
	store: Store,
	consumer: string,
	eventIds: string[],
	heldBy: string,
): Promise<string[]> {
	const rows = await store.query<{ event_id: string }>(
		releaseEventsSql(store, { consumer, eventIds, executionId: heldBy }),
	);
	return rows.map((row) => row.event_id);
}
