import type { Store } from '../../store';

/**
 * Stores $1 as the store's console secret unless one is there: the first process to ask wins,
 * and every other keeps the winner's.
 */
export const insertConsoleSecretSql = (store: Store): string => `
INSERT INTO ${store.table('console_secret')} (secret) VALUES ($1) ON CONFLICT (id) DO NOTHING`;

// A statement of its own, after the insert: it sees the row whichever process won the race.
export const consoleSecretSql = (store: Store): string => `
SELECT secret FROM ${store.table('console_secret')} WHERE id`;
