import { ConfigurationError, ItemError } from '../errors';
import { type Store, type Transaction } from '../store';
import { checkLength, TEXT_LIMITS } from '../limits';
import { checkedEntityKey, checkedEventId } from './eventIds';
import { storableValue } from '../store/storable';
import {
	type ClaimContext,
	ClaimMode,
	type ClaimRequest,
	type ClaimResult,
	DuplicateReason,
} from './outcomes';
import { advanceVersionsSql, claimEventsSql, dropClaimsSql, dropReclaimedSql } from './sql';
import { compareVersions } from './version';

/** Identifiers the store would change (control characters, half surrogates) are refused, never altered. */
function checkClaims(context: ClaimContext, requests: ClaimRequest[]): void {
	const consumer = checkedEventId(context.consumer);
	if ('problem' in consumer || consumer.id !== context.consumer) {
		throw new ConfigurationError(
			`Consumer ${JSON.stringify(context.consumer)} cannot be used: it ${'problem' in consumer ? consumer.problem.replace('has an event ID', 'is a name') : 'is longer than 255 characters'}`,
			'Set Consumer to a short name of letters, digits and punctuation (empty means this workflow).',
		);
	}
	for (const request of requests) {
		const checked = checkedEventId(request.eventId);
		if ('problem' in checked || checked.id !== request.eventId) {
			throw new ItemError(
				`Item ${request.index} ${'problem' in checked ? checked.problem : 'has an event ID longer than 255 characters that was not hashed'}`,
				request.index,
				'Set Event ID to the unique ID of the event as text or a number. Nothing was claimed.',
			);
		}
	}
}

/**
 * The request as it is claimed: an entity key longer than 255 characters becomes its hash (it is
 * part of an index's key, and only ever compared for equality), one the store would change is
 * refused; a version is numeric, of bounded precision.
 */
function withStoredEntityKey(request: ClaimRequest): ClaimRequest {
	checkLength(request.version, TEXT_LIMITS.entityVersion, request.index, 'nothing was claimed.');
	if (request.entityKey === undefined) return request;
	const checked = checkedEntityKey(request.entityKey);
	if ('problem' in checked)
		throw new ItemError(
			`Item ${request.index} ${checked.problem}`,
			request.index,
			'Set Entity Key to the ID of the object the event is about. Nothing was claimed.',
		);
	return checked.key === request.entityKey ? request : { ...request, entityKey: checked.key };
}

/**
 * Claims a run's events: duplicates inside the batch are settled in memory, the rest in one
 * statement. With ordering on, the entity versions' statements join it in one transaction, so an
 * event rejected as stale is never left claimed.
 */
export async function claimEvents(
	store: Store,
	context: ClaimContext,
	given: ClaimRequest[],
): Promise<ClaimResult[]> {
	checkClaims(context, given);
	const requests = given.map(withStoredEntityKey);
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
	if (firstByEvent.size === 0) {
		// Every event was a duplicate inside the batch: nothing to claim.
	} else if (![...firstByEvent.values()].some(isOrdered)) {
		// Without Check Order the claim is one statement, atomic on its own: no transaction's
		// BEGIN and COMMIT round trips, each a wait for n8n's event loop in a one-item execution.
		await claimCandidates(store, store, context, firstByEvent, results);
	} else {
		await store.transaction(async (tx) => {
			const { won, reclaimed } = await claimCandidates(tx, store, context, firstByEvent, results);
			const rejected = await applyOrdering(tx, store, context, won, results);
			const fresh = rejected.filter((eventId) => !reclaimed.has(eventId));
			const taken = rejected.filter((eventId) => reclaimed.has(eventId));
			if (fresh.length > 0)
				await tx.query(
					dropClaimsSql(store, {
						consumer: context.consumer,
						eventIds: fresh,
						executionId: context.executionId,
					}),
				);
			if (taken.length > 0)
				await tx.query(
					dropReclaimedSql(store, {
						consumer: context.consumer,
						eventIds: taken,
						executionId: context.executionId,
						reason: 'older than its entity by the time it was claimed again (Check Order)',
					}),
				);
		});
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

type Ordered = ClaimRequest & { entityKey: string; version: string };

const isOrdered = (r: ClaimRequest): r is Ordered =>
	r.entityKey !== undefined && r.version !== undefined;

/**
 * The claim statement over the batch's first occurrences (by event ID): the duplicates go into
 * `results`; the events won, and which of them were claimed again (a row was there before), come
 * back.
 */
async function claimCandidates(
	on: Store | Transaction,
	store: Store,
	context: ClaimContext,
	firstByEvent: Map<string, ClaimRequest>,
	results: Map<number, ClaimResult>,
): Promise<{ won: ClaimRequest[]; reclaimed: Set<string> }> {
	const candidates = [...firstByEvent.values()];
	const claimed = await on.query<{
		event_id: string;
		claimed: boolean;
		existing_status: string | null;
		claimed_by: string | null;
	}>(
		claimEventsSql(store, {
			consumer: context.consumer,
			eventIds: candidates.map((c) => c.eventId),
			entityKeys: candidates.map((c) => c.entityKey ?? null),
			versions: candidates.map((c) => c.version ?? null),
			status: context.mode === ClaimMode.doneAtClaim ? 'done' : 'in_progress',
			workflowId: context.workflowId ?? null,
			executionId: context.executionId,
			leaseSeconds: context.leaseSeconds,
			retentionDays: context.retentionDays,
			payloads: candidates.map((c) =>
				c.payload === undefined ? null : JSON.stringify(storableValue(c.payload)),
			),
			payloadBytes: candidates.map((c) => c.payloadBytes ?? null),
			ancestors: context.ancestors ?? [],
		}),
	);
	const won: ClaimRequest[] = [];
	const reclaimed = new Set<string>();
	for (const row of claimed) {
		const request = firstByEvent.get(row.event_id)!;
		if (row.claimed) {
			won.push(request);
			if (row.existing_status !== null) reclaimed.add(row.event_id);
		} else {
			results.set(request.index, {
				index: request.index,
				eventId: request.eventId,
				outcome: 'duplicate',
				reason: row.existing_status === 'done' ? DuplicateReason.done : DuplicateReason.inProgress,
				claimedBy: row.claimed_by,
			});
		}
	}
	return { won, reclaimed };
}

/**
 * Ordering: within the batch only the highest version of an entity can be new (the rest are
 * older than it, or equal); that one then has to beat the stored version. Returns the event
 * IDs whose claims must be dropped because they turned out stale or equal.
 */
async function applyOrdering(
	tx: Transaction,
	store: Store,
	context: ClaimContext,
	won: ClaimRequest[],
	results: Map<number, ClaimResult>,
): Promise<string[]> {
	const ordered = won.filter(isOrdered);
	if (ordered.length === 0) return [];
	const newestByEntity = new Map<string, Ordered>();
	for (const request of ordered) {
		const best = newestByEntity.get(request.entityKey);
		if (!best || compareVersions(request.version, best.version) > 0)
			newestByEntity.set(request.entityKey, request);
	}
	const rejected: string[] = [];
	const reject = (request: Ordered, against: string): void => {
		rejected.push(request.eventId);
		results.set(
			request.index,
			compareVersions(request.version, against) === 0
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
	const rows = await tx.query<{
		entity_key: string;
		advanced: boolean;
		current_version: string | null;
	}>(
		advanceVersionsSql(store, {
			consumer: context.consumer,
			entityKeys: newest.map((r) => r.entityKey),
			versions: newest.map((r) => r.version),
			eventIds: newest.map((r) => r.eventId),
			executionId: context.executionId,
		}),
	);
	const current = new Map<string, string>();
	for (const row of rows) {
		const request = newestByEntity.get(row.entity_key)!;
		if (row.advanced) {
			current.set(row.entity_key, request.version);
		} else {
			const stored = String(row.current_version);
			current.set(row.entity_key, stored);
			reject(request, stored);
		}
	}
	for (const request of ordered) {
		if (newestByEntity.get(request.entityKey) !== request)
			reject(request, current.get(request.entityKey)!);
	}
	return rejected;
}
