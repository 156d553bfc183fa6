import type { Store } from '../store';
import { abandonExecutionKeysSql } from './sql';

/**
 * A crashed or failed execution's write keys that were still in progress, marked at once: failed
 * when no attempt had started (nothing was sent), unknown when one had, so a redelivery or a
 * recovery reconciles them with the same key now instead of waiting out the lease.
 */
export async function abandonExecutionKeys(
	store: Store,
	executionId: string,
): Promise<Array<{ scope: string; key: string; status: string }>> {
	return await store.query<{ scope: string; key: string; status: string }>(
		abandonExecutionKeysSql(store, { executionId }),
	);
}
