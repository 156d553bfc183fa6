import { storeKey, type StoreConfig } from './config';
import { Store } from './store';

/** One store per credential in this process, closed when it sits idle. */
const IDLE_CLOSE_MS = 5 * 60_000;
const stores = new Map<string, Store>();
let sweeper: NodeJS.Timeout | undefined;

/**
 * Closes stores nobody used for a while, so an n8n that stops using a credential frees its
 * connections. A store held by a run (a write in flight) is never closed.
 */
export function sweepIdleStores(now = Date.now()): void {
	for (const [key, store] of stores) {
		if (
			!store.held &&
			now - store.lastUsed > IDLE_CLOSE_MS &&
			store.pool.totalCount === store.pool.idleCount
		) {
			stores.delete(key);
			void store.close().catch(() => undefined);
		}
	}
	if (stores.size === 0 && sweeper) {
		clearInterval(sweeper);
		sweeper = undefined;
	}
}

/** The cached store for a credential: the same pool for every execution that uses it. */
export function getStore(config: StoreConfig): Store {
	const key = storeKey(config);
	let store = stores.get(key);
	if (!store) {
		store = new Store(config);
		stores.set(key, store);
		if (!sweeper) {
			sweeper = setInterval(sweepIdleStores, 60_000);
			sweeper.unref();
		}
	}
	store.lastUsed = Date.now();
	return store;
}

/** Closes every cached store (tests, shutdown). */
export async function closeAllStores(): Promise<void> {
	const all = [...stores.values()];
	stores.clear();
	await Promise.all(all.map((store) => store.close().catch(() => undefined)));
}
