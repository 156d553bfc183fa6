import { StoreUnavailableError } from '../errors';
import type { StoreConfig } from './config';
import { NETWORK_ERROR_CODES, NETWORK_ERROR_WORDS, SqlState, sqlStateOf } from './sqlstate';

/**
 * Connection-level failures become StoreUnavailableError; SQL errors pass through unchanged.
 * Whether anything was sent before the store failed is for the caller to say (the writer does).
 */
export function toStoreError(error: unknown, config: StoreConfig): unknown {
	const code = sqlStateOf(error);
	const where = `${config.host}:${config.port}`;
	if (code && NETWORK_ERROR_CODES.has(code)) {
		// The socket code stays out of the message: n8n replaces messages that contain one with its
		// own generic text, and this one must say which store failed.
		return new StoreUnavailableError(
			`Reliability store unreachable at ${where}: ${NETWORK_ERROR_WORDS[code] ?? 'network error'}`,
			`Check that Postgres is running and that host and port in the Reliability Store credential are right (${code}).`,
			{ cause: error },
		);
	}
	if (code === SqlState.invalidPassword || code === SqlState.invalidAuthorization) {
		return new StoreUnavailableError(
			`Reliability store refused the login of "${config.user}" at ${where}`,
			'Check user and password in the Reliability Store credential.',
			{ cause: error },
		);
	}
	if (
		code === SqlState.cannotConnectNow ||
		code === SqlState.adminShutdown ||
		code === SqlState.invalidCatalogName
	) {
		return new StoreUnavailableError(
			`Reliability store at ${where} is not available (SQLSTATE ${code})`,
			'Postgres is starting, stopping, or the database does not exist.',
			{ cause: error },
		);
	}
	if (error instanceof Error && /timeout|Connection terminated/i.test(error.message) && !code) {
		return new StoreUnavailableError(
			`Reliability store at ${where} did not answer: ${error.message}`,
			'Check that Postgres is reachable from n8n.',
			{ cause: error },
		);
	}
	return error;
}
