import type { SqlQuery, Store } from '../../store';

/**
 * Stores `secret` as the store's console secret unless one is there: the first process to ask
 * wins, and every other keeps the winner's.
 */
export const insertConsoleSecretSql = (store: Store, input: { secret: Buffer }): SqlQuery => ({
	text: `
INSERT INTO ${store.table('console_secret')} (secret) VALUES ($1) ON CONFLICT (id) DO NOTHING`,
	values: [input.secret],
});

// A statement of its own, after the insert: it sees the row whichever process won the race.
export const consoleSecretSql = (store: Store): SqlQuery => ({
	text: `
SELECT secret FROM ${store.table('console_secret')} WHERE id`,
	values: [],
});
