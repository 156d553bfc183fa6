import { releaseBreakerHolds } from '../deadletter';
import { maskText } from '../masking';
import type { Store } from '../store';
import { gateHold, type GateState } from './claim';
import type { KeyRow } from './keyRow';
import { parkFailed } from './park';
import { conflictWithSuccess, unsentFailure } from './outcomes';
import { fromSaved } from './responses';
import { heldId } from './lease';
import { keyIdOf } from './runState';
import { succeededKeysSql } from './sql';
import { FailureClass, type WriteContext, type WriteOutcome, type WriteRequest } from './types';
import type { Waves } from './waves';

/**
 * What the claim's gate saw, acted on: a paused integration or an open breaker holds every item
 * and calls nothing (the claim claimed nothing). Otherwise, items an earlier breaker held whose
 * cool-down is over go back to replay, and the run goes on (`undefined`).
 */
export async function gate(
	store: Store,
	context: WriteContext,
	waves: Waves,
	requests: WriteRequest[],
	state: GateState,
): Promise<WriteOutcome[] | undefined> {
	const integration = context.integration;
	if (!integration) return undefined;
	const held = gateHold(integration, state);
	if (!held) {
		if (context.breaker && state.breaker_holds) {
			await releaseBreakerHolds(store, {
				integration,
				actor: 'Idempotent HTTP Write',
				reason: `circuit breaker of ${integration} closed`,
			});
		}
		return undefined;
	}
	const { message, retryAt: openUntil } = held;
	// What already succeeded is answered from its saved response: it needs no call, and holding
	// it would put done work back in a queue. A different request under a succeeded key is a
	// conflict now and after the outage: held, it would wait in a queue for a call never made.
	const settled = new Map(
		(
			await store.query<
				KeyRow & { scope: string; key: string; asked: string; same_request: boolean }
			>(
				succeededKeysSql(store, {
					requests: requests.map((r) => ({
						scope: r.scope,
						key: r.key,
						fingerprint: r.fingerprint,
					})),
				}),
			)
		).map((row) => [`${heldId(row.scope, row.key)}\u0000${row.asked}`, row]),
	);
	// By key and request: two requests under one key in a run are answered each for its own.
	const settledOf = (r: WriteRequest) => settled.get(`${keyIdOf(r)}\u0000${r.fingerprint}`);
	const waiting = requests.filter((r) => !settledOf(r));
	const heldOutcomes = waiting.map((r) =>
		unsentFailure(r, {
			class: FailureClass.paused,
			message: maskText(message, context.maskFields),
			retryAt: openUntil,
		}),
	);
	// A run that only routes its failures leaves held items to its caller (the Outbox relay
	// retries them): a letter would be replayed after the caller delivered the item.
	if (waiting.length > 0 && context.park) {
		await parkFailed(
			store,
			context,
			heldOutcomes.map((outcome, i) => ({ outcome, request: waiting[i] })),
			held.hold,
		);
	}
	return requests.map((r) => {
		const saved = settledOf(r);
		if (!saved) return heldOutcomes[waiting.indexOf(r)];
		if (!saved.same_request) {
			const conflict = unsentFailure(r, {
				class: FailureClass.conflict,
				message: conflictWithSuccess(r.key),
			});
			waves.park(conflict, r);
			return conflict;
		}
		waves.succeeded(r);
		return {
			index: r.index,
			key: r.key,
			ok: true,
			replayed: true,
			attempts: saved.attempts ?? 0,
			durationMs: 0,
			answer: fromSaved(saved),
		};
	});
}
