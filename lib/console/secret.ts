import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store';
import { consoleSecretSql, insertConsoleSecretSql } from './sql';

/**
 * The console's form tokens: an HMAC-SHA256 with a random secret the store generates once per
 * schema, over the operator's name and the hour. A token is accepted in its hour and the next,
 * so a page loaded just before the hour turns still posts; after that the operator reloads.
 * Nothing another site can learn (the operator's name, the proxy's header, the credentials'
 * hash) is enough to compute one.
 */
const HOUR_MS = 3_600_000;

const secrets = new WeakMap<Store, Promise<Buffer>>();

/** The store's console secret: created by the first process that asks, then read once per process. */
export function consoleSecret(store: Store): Promise<Buffer> {
	let secret = secrets.get(store);
	if (!secret) {
		secret = (async () => {
			await store.query(insertConsoleSecretSql(store, { secret: randomBytes(32) }));
			const [row] = await store.query<{ secret: Buffer }>(consoleSecretSql(store));
			return row.secret;
		})();
		// A failure (store down) is not remembered: the next request tries again.
		secret.catch(() => secrets.delete(store));
		secrets.set(store, secret);
	}
	return secret;
}

const sign = (secret: Buffer, operator: string, hour: number): string =>
	createHmac('sha256', secret)
		.update(`reliability-console-form\n${hour}\n${operator}`)
		.digest('base64url');

/** The token the console puts into the forms it serves to `operator` at time `at`. */
export function formToken(secret: Buffer, operator: string, at: number = Date.now()): string {
	return sign(secret, operator, Math.floor(at / HOUR_MS));
}

/** Whether `token` was issued to `operator` in this hour or the one before. */
export function formTokenValid(
	secret: Buffer,
	operator: string,
	token: string,
	at: number = Date.now(),
): boolean {
	const hour = Math.floor(at / HOUR_MS);
	const given = Buffer.from(token);
	return [hour, hour - 1].some((h) => {
		const expected = Buffer.from(sign(secret, operator, h));
		return given.length === expected.length && timingSafeEqual(given, expected);
	});
}
