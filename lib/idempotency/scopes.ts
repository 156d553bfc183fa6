import { type Store } from '../store';
import { SqlState, sqlStateOf } from '../store/sqlstate';
import { adoptScopeSql } from './sql';

/**
 * The default scope follows the node's ID, which n8n keeps across renames; it followed the node's
 * name before. Records of the name's scope move to the ID's scope before a run claims anything,
 * once per process and store, so an upgrade neither resends what succeeded nor forgets what is
 * unknown. A key already recorded under the ID's scope keeps its record there.
 */
const adopted = new WeakMap<Store, Set<string>>();

export async function adoptScope(store: Store, move: { from: string; to: string }): Promise<void> {
	if (move.from === move.to) return;
	let done = adopted.get(store);
	if (!done) adopted.set(store, (done = new Set()));
	const id = `${move.from}\u0000${move.to}`;
	if (done.has(id)) return;
	try {
		await store.query(adoptScopeSql(store, { from: move.from, to: move.to }));
	} catch (error) {
		// A claim under the new scope raced the move: nothing moved; the next run moves them.
		if (sqlStateOf(error) === SqlState.uniqueViolation) return;
		throw error;
	}
	done.add(id);
}
