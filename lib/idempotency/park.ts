import { type ItemStep, parkedOrThrow, type ParkRequest, parkItems } from '../deadletter';
import { lengthProblem, TEXT_LIMITS } from '../limits';
import type { Store } from '../store';
import { storableValue } from '../store/storable';
import type { Compensation } from './compensation';
import { itemRefOf } from './runState';
import { stepsOfItemsSql } from './sql';
import { FailureClass, type WriteContext, type WriteFailure, type WriteRequest } from './types';

/**
 * Parks a run's failed items (or holds them, for a pause or an open breaker) with the earlier
 * steps of each item, and writes each dead letter's id into its outcome.
 */
export async function parkFailed(
	store: Store,
	context: WriteContext,
	failed: Array<{ outcome: WriteFailure; request: WriteRequest }>,
	hold?: 'pause' | 'breaker',
): Promise<void> {
	const steps = await stepsOf(
		store,
		context,
		failed.map(({ request }) => request),
	);
	const requests: ParkRequest[] = failed.map(({ outcome, request }, ord) => ({
		workflowId: context.workflowId ?? 'unsaved',
		workflowName: context.workflowName,
		executionId: context.executionId,
		step: context.node,
		itemIndex: request.index,
		// A key the run refused for its length is not the record's key: the payload identifies it.
		idempotencyKey:
			request.key && lengthProblem(request.key, TEXT_LIMITS.idempotencyKey) === undefined
				? request.key
				: undefined,
		businessId: request.businessId,
		runLink: context.runLink,
		integration: context.integration,
		errorClass: outcome.failure.class,
		errorMessage: outcome.failure.message,
		errorStatus: outcome.failure.status,
		attempts: outcome.attempts,
		// The configured text says what the steps before this one did; when this step's own
		// outcome is unknown, the record must not read as if its write certainly did not happen.
		alreadyHappened:
			outcome.failure.class === FailureClass.unknownOutcome
				? [
						context.alreadyHappened,
						`${context.node} may have taken effect (its response was lost): check before replaying`,
					]
						.filter(Boolean)
						.join('; ')
				: context.alreadyHappened,
		impact: context.impact,
		owner: context.owner,
		status: hold ? 'held' : 'new',
		holdReason: hold,
		payload: request.payload,
		retryAfter: outcome.failure.retryAt,
		retentionDays: 90,
		attemptHistory: outcome.history,
		sourceVersion: context.sourceVersion,
		steps: steps.get(ord),
	}));
	// The texts every item shares were checked at the first step: a refusal here is a bug, and
	// fails the run rather than leave an item neither parked nor reported.
	const results = parkedOrThrow(
		await parkItems(store, requests, { maskFields: context.maskFields }),
	);
	results.forEach((result, i) => (failed[i].outcome.failure.deadLetterId = result.id));
}

/** The earlier steps of each failed item (by its position), from the keys its steps recorded. */
async function stepsOf(
	store: Store,
	context: WriteContext,
	requests: WriteRequest[],
): Promise<Map<number, ItemStep[]>> {
	const rows = await store.query<{
		ord: number;
		scope: string;
		key: string;
		node: string | null;
		completed_at: Date | null;
		response_status: number | null;
		response_body: string | null;
		compensation: Compensation | null;
	}>(
		stepsOfItemsSql(store, {
			// Storable as the claims stored them: a key with an unpaired surrogate matches its record.
			items: storableValue(
				requests.map((request, ord) => ({
					ord,
					workflow_id: context.workflowId ?? null,
					item_ref: itemRefOf(request, context),
					scope: request.scope,
					key: request.key,
				})),
			),
		}),
	);
	const steps = new Map<number, ItemStep[]>();
	for (const row of rows) {
		const list = steps.get(row.ord) ?? [];
		list.push({
			scope: row.scope,
			key: row.key,
			step: row.node,
			completedAt: row.completed_at ? new Date(row.completed_at).toISOString() : null,
			responseStatus: row.response_status,
			response: row.response_body,
			compensation: row.compensation,
		});
		steps.set(row.ord, list);
	}
	return steps;
}
