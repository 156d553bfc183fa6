import { ConfigurationError } from '../errors';
import { DEFAULT_SCHEMA, type StoreConfig, toStoreConfig } from '../store';

/**
 * Where the business tables live in another database than the store: n8n's own Postgres
 * credential names it, and the outbox table is kept there in a schema of its own (created and
 * migrated on first use, like the store), so the business rows and their messages share one
 * transaction.
 */
export function outboxStoreConfig(
	credential: Record<string, unknown>,
	schema: string = DEFAULT_SCHEMA,
): StoreConfig {
	if (credential.sshTunnel === true)
		throw new ConfigurationError(
			'The Postgres credential connects through an SSH tunnel, which the outbox does not open',
			'Use a credential that reaches Postgres directly (from the n8n host or worker), or keep the outbox in the Reliability Store.',
		);
	const ssl =
		credential.allowUnauthorizedCerts === true ? 'require' : String(credential.ssl ?? 'disable');
	if (!['disable', 'allow', 'require'].includes(ssl))
		throw new ConfigurationError(
			`SSL mode "${ssl}" of the Postgres credential is not supported here`,
			'Choose Disable, Allow or Require in the credential.',
		);
	return toStoreConfig({
		host: credential.host,
		port: credential.port,
		database: credential.database,
		user: credential.user,
		password: credential.password,
		ssl,
		schema: schema.trim() || DEFAULT_SCHEMA,
		// n8n's Postgres credential defaults to 100 connections; the outbox needs far fewer per process.
		maxConnections: Math.min(Number(credential.maxConnections ?? 10) || 10, 20),
	});
}
