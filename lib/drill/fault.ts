import type { Store } from '../store';
import type { WriteDeps, WriteRequest } from '../idempotency/types';
import { fireForcedTimeout } from './mode';

/**
 * The forced timeout after commit: a send that the target answered with a success (it has
 * committed) takes the integration's armed timeout, and if it took it, its answer is discarded
 * and the send reads as lost, exactly as a timeout after commit would. The write then recovers
 * as its On Unknown Outcome says (resend with the key, or look the effect up), or parks the
 * item as unknown: what the drill's report judges.
 *
 * Only a run whose claim saw the timeout armed for an event it writes wraps its sender, and only
 * a write of that event (its key or business ID carries the event's value) can take it: a live
 * write of the same integration never does, and a run outside a drill pays nothing. A failure of the firing statement leaves the answer as it came: a drill never costs
 * the write its result.
 */
export function withForcedTimeout(
	store: Store,
	send: WriteDeps['send'],
	at: { integration: string; event: string; executionId?: string },
): WriteDeps['send'] {
	return async (request, attempt, wire) => {
		const result = await send(request, attempt, wire);
		if (result.kind !== 'response') return result;
		if (!carriesEvent(request, at.event)) return result;
		const status = result.answer.status;
		if (status < 200 || status > 299) return result;
		const fired = await fireForcedTimeout(store, {
			integration: at.integration,
			scope: request.scope,
			key: request.key,
			businessId: request.businessId,
			executionId: at.executionId,
		}).catch(() => false);
		if (!fired) return result;
		return {
			kind: 'lost',
			code: 'EDRILL',
			message: `fire drill: the target answered ${status} (committed) and the answer was discarded, as a timeout after commit would lose it`,
		};
	};
}

/** Whether a write belongs to a drill's event: its key or business ID carries the event's value. */
export const carriesEvent = (request: WriteRequest, event: string): boolean =>
	request.key.includes(event) || request.businessId === event;

/** The warning a run in a drilled integration shows in its output. */
export function drillNotice(integration: string, until: Date, armed: boolean): string {
	return `Fire drill is on for integration ${integration} until ${until.toISOString()}${armed ? ": the next write of the drill's event that the target accepts has its answer discarded, as a timeout after commit would" : ''}. A drill sends real requests; it ends by itself, or stop it in the console (Controls, Fire drill).`;
}
