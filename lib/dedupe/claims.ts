import type { Store } from '../store';
import {
	type ClaimContext,
	ClaimMode,
	type ClaimRequest,
	type ClaimResult,
	DuplicateReason,
} from './outcomes';
import {
	advanceVersionsSql,
	claimEventsSql,
	completeEventsSql,
	completeExecutionSql,
	dropClaimsSql,
	purgeExpiredSql,
	releaseEventsSql,
	releaseExecutionSql,
} from './sql';

/**
 * Claims a run's events: duplicates inside the batch are settled in memory, the rest in one
 * statement (plus one for entity versions when ordering is on), inside one transaction so an
 * event rejected as stale is never left claimed.
 */
export async function claimEvents(
	store: Store,
	context: ClaimContext,
	requests: ClaimRequest[],
): Promise<ClaimResult[]> {
	const results = new Map<number, ClaimResult>();
	const firstByEvent = new Map<string, ClaimRequest>();
	for (const request of requests) {
		if (firstByEvent.has(request.eventId)) {
			results.set(request.index, {
				index: request.index,
				eventId: request.eventId,
				outcome: 'duplicate',
				reason: DuplicateReason.inBatch,
			});
		} else {
			firstByEvent.set(request.eventId, request);
		}
	}
	const candidates = [...firstByEvent.values()];
	if (candidates.length > 0) {
		await store.ready();
		const client = await store.pool.connect();
		try {
			await client.query('BEGIN');
			const claimed = await client.query<{
				event_id: string;
				claimed: boolean;
				existing_status: string | null;
				claimed_by: string | null;
			}>(claimEventsSql(store), [
				context.consumer,
				candidates.map((c) => c.eventId),
				candidates.map((c) => c.entityKey ?? null),
				candidates.map((c) => c.version ?? null),
				context.mode === ClaimMode.doneAtClaim ? 'done' : 'in_progress',
				context.workflowId ?? null,
				context.executionId,
				context.leaseSeconds,
				context.retentionDays,
			]);
			const won: ClaimRequest[] = [];
			for (const row of claimed.rows) {
				const request = firstByEvent.get(row.event_id)!;
				if (row.claimed) {
					won.push(request);
				} else {
					results.set(request.index, {
						index: request.index,
						eventId: request.eventId,
						outcome: 'duplicate',
						reason:
							row.existing_status === 'done' ? DuplicateReason.done : DuplicateReason.inProgress,
						claimedBy: row.claimed_by,
					});
				}
			}
			const rejected = await applyOrdering(client, store, context, won, results);
			if (rejected.length > 0) {
				await client.query(dropClaimsSql(store), [context.consumer, rejected, context.executionId]);
			}
			await client.query('COMMIT');
		} catch (error) {
			await client.query('ROLLBACK').catch(() => undefined);
			throw error;
		} finally {
			client.release();
		}
	}
	return requests.map(
		(request) =>
			results.get(request.index) ?? {
				index: request.index,
				eventId: request.eventId,
				outcome: 'new',
			},
	);
}

/**
 * Ordering: within the batch only the highest version of an entity can be new (the rest are
 * older than it, or equal); that one then has to beat the stored version. Returns the event
 * IDs whose claims must be dropped because they turned out stale or equal.
 */
async function applyOrdering(
	client: { query: Store['pool']['query'] },
	store: Store,
	context: ClaimContext,
	won: ClaimRequest[],
	results: Map<number, ClaimResult>,
): Promise<string[]> {
	const ordered = won.filter((r) => r.entityKey !== undefined && r.version !== undefined);
	if (ordered.length === 0) return [];
	const newestByEntity = new Map<string, ClaimRequest>();
	for (const request of ordered) {
		const best = newestByEntity.get(request.entityKey!);
		if (!best || request.version! > best.version!) newestByEntity.set(request.entityKey!, request);
	}
	const rejected: string[] = [];
	const reject = (request: ClaimRequest, against: number): void => {
		rejected.push(request.eventId);
		results.set(
			request.index,
			request.version === against
				? {
						index: request.index,
						eventId: request.eventId,
						outcome: 'duplicate',
						reason: DuplicateReason.sameVersion,
					}
				: {
						index: request.index,
						eventId: request.eventId,
						outcome: 'stale',
						lastVersion: against,
					},
		);
	};
	const newest = [...newestByEntity.values()];
	const { rows } = await client.query<{
		entity_key: string;
		advanced: boolean;
		current_version: string | null;
	}>(advanceVersionsSql(store), [
		context.consumer,
		newest.map((r) => r.entityKey),
		newest.map((r) => r.version),
		newest.map((r) => r.eventId),
		context.executionId,
	]);
	const current = new Map<string, number>();
	for (const row of rows) {
		const request = newestByEntity.get(row.entity_key)!;
		if (row.advanced) {
			current.set(row.entity_key, request.version!);
		} else {
			const stored = Number(row.current_version);
			current.set(row.entity_key, stored);
			reject(request, stored);
		}
	}
	for (const request of ordered) {
		if (newestByEntity.get(request.entityKey!) !== request)
			reject(request, current.get(request.entityKey!)!);
	}
	return rejected;
}

/** Marks events done (lease mode); returns the IDs that were open and are now done. */
export async function completeEvents(
	store: Store,
	consumer: string,
	eventIds: string[],
): Promise<string[]> {
	const rows = await store.query<{ event_id: string }>(completeEventsSql(store), [
		consumer,
		eventIds,
	]);
	return rows.map((row) => row.event_id);
}

export async function completeExecution(store: Store, executionId: string): Promise<number> {
	return (await store.query(completeExecutionSql(store), [executionId])).length;
}

/** Frees every claim a (failed) execution made, so a redelivery or a replay is new again. */
export async function releaseExecutionClaims(store: Store, executionId: string): Promise<number> {
	const rows = await store.query<{ released: number }>(releaseExecutionSql(store), [executionId]);
	return rows[0].released;
}

export async function releaseEvents(
	store: Store,
	consumer: string,
	eventIds: string[],
): Promise<string[]> {
	const rows = await store.query<{ event_id: string }>(releaseEventsSql(store), [
		consumer,
		eventIds,
	]);
	return rows.map((row) => row.event_id);
}

/** Deletes events past retention (one consumer, or all when null); returns how many. */
export async function purgeExpiredEvents(
	store: Store,
	consumer: string | null,
	sliceSize = 10_000,
): Promise<number> {
	let total = 0;
	for (;;) {
		await store.ready();
		const result = await store.pool.query(purgeExpiredSql(store), [consumer, sliceSize]);
		total += result.rowCount ?? 0;
		if ((result.rowCount ?? 0) < sliceSize) return total;
	}
}
