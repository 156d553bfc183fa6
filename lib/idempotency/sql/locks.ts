import type { Store } from '../../store';

/**
 * A CTE that locks the records named by `input` in key order. Every statement that changes
 * several records locks them through it (or inserts in the same order), so two batches that
 * overlap wait for each other instead of deadlocking.
 */
export const lockedInKeyOrder = (store: Store): string => `locked AS (
	SELECT k.scope, k.key FROM ${store.table('idempotency_keys')} k JOIN input i ON i.scope = k.scope AND i.key = k.key
	ORDER BY k.scope, k.key
	FOR UPDATE OF k
)`;
