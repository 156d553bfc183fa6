import { keptBusinessId } from '../limits';
import { plainText } from '../describe';
import type { Store } from '../store';
import { storableText } from '../store/storable';
import type { KeyRow } from './keyRow';
import type { RunLeases } from './lease';
import { leaseOf, type RunState, timeoutOf } from './runState';
import { claimKeysSql } from './sql';
import type { WriteContext, WriteRequest } from './types';

/**
 * Claims a run's keys in one statement, and one item's key again once its record failed
 * meanwhile or is gone. Both return each key's record as the claim found it.
 */

/** What the claim's gate saw of the run's integration (all false and null without one). */
export interface GateState {
	paused: boolean;
	paused_by: string | null;
	pause_reason: string | null;
	open_until: Date | null;
	breaker_holds: boolean;
	/** Until when the integration is in a fire drill (null: not in one). */
	drill_until: Date | null;
	/** The event whose next committed write the drill's forced timeout waits for (null: none). */
	drill_armed_for: string | null;
}

/** The claim's answer: each leader's record by position, and the gate. */
export interface Claims {
	rows: Map<number, KeyRow>;
	gate: GateState;
}

/**
 * Claims the first occurrence of every key, unless the integration is paused or its breaker
 * open; the rows come back by position (`ord`). The first `sendingAtOnce` keys (the items the
 * run's lanes take first) are claimed with their first attempt started: a claimed row of them
 * says until when (local clock) its lease surely covers an attempt begun now.
 */
export async function claimKeys(
	store: Store,
	context: WriteContext,
	leases: RunLeases,
	leaders: WriteRequest[],
	sendingAtOnce: number,
): Promise<Claims> {
	const integration = context.integration ?? null;
	const sentAt = leases.now();
	const rows = await store.query<KeyRow & GateState & { ord: number }>(
		claimKeysSql(store, {
			keys: leaders.map((r, ord) => ({
				ord,
				scope: r.scope,
				key: r.key,
				fingerprint: r.fingerprint,
				lease_ms: leaseOf(context, r),
				timeout_ms: timeoutOf(r),
				start: ord < sendingAtOnce,
				business_id: keptBusinessId(r.businessId),
			})),
			workflowId: context.workflowId ?? null,
			executionId: context.executionId,
			node: context.node,
			retentionDays: context.retentionDays,
			integration,
			pauseName: integration === null ? null : storableText(plainText(integration)),
		}),
	);
	// Claimed records are held from now on, also while they wait for a lane: the waves renew them.
	for (const row of rows) {
		if (!row.claimed) continue;
		const request = leaders[row.ord];
		if (row.ord < sendingAtOnce) row.started_until = sentAt + leaseOf(context, request);
		leases.hold({
			scope: request.scope,
			key: request.key,
			generation: Number(row.generation),
			leaseMs: leaseOf(context, request),
			timeoutMs: timeoutOf(request),
		});
	}
	return { rows: new Map(rows.map((row) => [row.ord, row])), gate: rows[0] };
}

/**
 * Claims one item's key again: its record failed meanwhile (claimable again) or is gone. The
 * gate rides in this claim as in the run's: while the integration is paused or its breaker open
 * nothing is claimed, and the row says why, so the item is held instead of sent.
 */
export async function claimKeyAgain(
	run: RunState,
	request: WriteRequest,
): Promise<KeyRow & GateState> {
	const integration = run.context.integration ?? null;
	const [again] = await run.store.query<KeyRow & GateState>(
		claimKeysSql(run.store, {
			keys: [
				{
					ord: 0,
					scope: request.scope,
					key: request.key,
					fingerprint: request.fingerprint,
					lease_ms: leaseOf(run.context, request),
					timeout_ms: timeoutOf(request),
				},
			],
			workflowId: run.context.workflowId ?? null,
			executionId: run.context.executionId,
			node: run.context.node,
			retentionDays: run.context.retentionDays,
			integration,
			pauseName: integration === null ? null : storableText(plainText(integration)),
		}),
	);
	return again;
}

/** Why the gate held a claim, or undefined when it let the claim through. */
export function gateHold(
	integration: string | undefined,
	state: GateState,
): { hold: 'pause' | 'breaker'; message: string; retryAt?: Date } | undefined {
	if (!integration) return undefined;
	if (state.paused) {
		return {
			hold: 'pause',
			message:
				`integration ${integration} is paused by ${state.paused_by ?? ''}: ${state.pause_reason ?? ''}`.trim(),
		};
	}
	if (state.open_until) {
		const retryAt = new Date(state.open_until);
		return {
			hold: 'breaker',
			message: `circuit breaker for ${integration} is open until ${retryAt.toISOString()}`,
			retryAt,
		};
	}
	return undefined;
}
