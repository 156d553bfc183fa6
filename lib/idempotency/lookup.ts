import type { ItemOutcomes, Owned } from './outcomes';
import { decideRetry } from './policy';
import { FailureClass, type WriteOutcome } from './types';

/**
 * Reconcile by lookup: exists -> success with the found resource; absent -> undefined (the
 * caller sends); conflict or no answer within the budget -> unknown, parked. A failed lookup
 * is retried with backoff, bounded like the sends.
 */
export async function lookup(item: ItemOutcomes, owned: Owned): Promise<WriteOutcome | undefined> {
	const run = item.run;
	for (let tries = 1; ; tries++) {
		let message: string;
		try {
			const found = await run.deps.lookup!(item.request);
			item.note({ kind: 'lookup', class: found.kind });
			// The integration answered: for the breaker, as good as a success.
			run.streak.success();
			if (found.kind === 'exists') return { ...item.succeed(owned, found.answer), replayed: true };
			if (found.kind === 'absent') {
				owned.lostEarlier = false;
				return undefined;
			}
			return item.settleFail(owned, 'unknown', {
				class: FailureClass.unknownOutcome,
				message: `reconcile found a conflicting record: ${found.message}`,
			});
		} catch (error) {
			message = error instanceof Error ? error.message : String(error);
			item.note({ kind: 'lookup', class: 'error', message });
		}
		const decision = decideRetry(
			{ attempt: tries, startedAtMs: item.started, nowMs: run.now() },
			item.context.policy,
			run.random,
		);
		if (decision.kind !== 'retry') {
			return item.settleFail(owned, 'unknown', {
				class: FailureClass.unknownOutcome,
				message: `the lookup that decides whether the effect exists failed (${message}), so the effect may exist; check the target, then replay`,
			});
		}
		await run.sleep(decision.delayMs);
	}
}
