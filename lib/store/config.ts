import { createHash } from 'node:crypto';
import type { PoolConfig } from 'pg';
import { ConfigurationError } from '../errors';
import { validateSchemaName } from './identifiers';

const SslModes = ['disable', 'allow', 'require', 'verify'] as const;
type SslMode = (typeof SslModes)[number];

/** The fields of the Reliability Store credential, as the engine needs them. */
export interface StoreConfig {
	host: string;
	port: number;
	database: string;
	user: string;
	password: string;
	ssl: SslMode;
	/** PEM of the certificate authority, used with ssl = verify. */
	ca?: string;
	schema: string;
	maxConnections: number;
}

export const DEFAULT_SCHEMA = 'n8n_reliability';
const DEFAULT_MAX_CONNECTIONS = 10;

/** Reads and checks credential data (an n8n credential object or plain values). */
export function toStoreConfig(data: Record<string, unknown>): StoreConfig {
	const text = (key: string, fallback = ''): string => {
		const value = data[key];
		return value === undefined || value === null ? fallback : String(value);
	};
	const host = text('host', 'localhost').trim();
	if (!host)
		throw new ConfigurationError(
			'The Reliability Store credential has no host',
			'Set Host to the Postgres server name or address.',
		);
	const port = Number(data.port ?? 5432);
	if (!Number.isInteger(port) || port < 1 || port > 65535) {
		throw new ConfigurationError(
			`Port ${JSON.stringify(data.port)} is not a TCP port`,
			'Set Port to a number from 1 to 65535 (Postgres listens on 5432 by default).',
		);
	}
	const database = text('database', 'postgres').trim();
	if (!database)
		throw new ConfigurationError(
			'The Reliability Store credential has no database',
			'Set Database to the database that holds the store.',
		);
	const ssl = text('ssl', 'disable') as SslMode;
	if (!SslModes.includes(ssl)) {
		throw new ConfigurationError(
			`SSL mode "${ssl}" is unknown`,
			`Choose one of ${SslModes.join(', ')}.`,
		);
	}
	const ca = text('ca').trim() || undefined;
	if (ssl === 'verify' && !ca) {
		throw new ConfigurationError(
			'SSL mode "verify" needs the certificate authority',
			'Paste the PEM of the CA that signed the server certificate into CA Certificate.',
		);
	}
	const maxConnections = Number(data.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
	if (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > 1000) {
		throw new ConfigurationError(
			`Max connections ${JSON.stringify(data.maxConnections)} is out of range`,
			'Use a whole number from 1 to 1000.',
		);
	}
	return {
		host,
		port,
		database,
		user: text('user', 'postgres'),
		password: text('password'),
		ssl,
		ca,
		schema: validateSchemaName(text('schema', DEFAULT_SCHEMA).trim() || DEFAULT_SCHEMA),
		maxConnections,
	};
}

/** A stable hash of every field that changes the connection: one pool per distinct credential. */
export const storeKey = (config: StoreConfig): string =>
	createHash('sha256')
		.update(
			JSON.stringify([
				config.host,
				config.port,
				config.database,
				config.user,
				config.password,
				config.ssl,
				config.ca ?? '',
				config.schema,
				config.maxConnections,
			]),
		)
		.digest('hex');

/**
 * SSL modes as libpq names them: allow connects in plain and switches to TLS only when the
 * server refuses a plain connection (the caller retries with `tls: true`); require speaks TLS
 * without checking the certificate; verify checks it against the given CA and the host name.
 */
export function toPoolConfig(
	config: StoreConfig,
	overrides: Partial<PoolConfig> = {},
	tls = config.ssl !== 'allow' && config.ssl !== 'disable',
): PoolConfig {
	return {
		host: config.host,
		port: config.port,
		database: config.database,
		user: config.user,
		password: config.password,
		ssl: !tls
			? false
			: config.ssl === 'verify'
				? { ca: config.ca, rejectUnauthorized: true }
				: { rejectUnauthorized: false },
		max: config.maxConnections,
		connectionTimeoutMillis: 10_000,
		idleTimeoutMillis: 30_000,
		allowExitOnIdle: true,
		application_name: 'n8n-nodes-reliability',
		...overrides,
	};
}
