import { Client } from 'pg';
import { isReliabilityError } from '../errors';
import { type StoreConfig, toPoolConfig, toStoreConfig } from './config';
import { appliedMigrationId, latestMigrationId } from './migrations';
import { storeAccessSql } from './sql';
import { SqlState, sqlStateOf } from './sqlstate';

export interface DiagnosisResult {
	ok: boolean;
	message: string;
}

const quoteLiteralIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The credential's test button: connects once (no pooled connection is kept) and says what it
 * found, or exactly what failed and what to do about it.
 */
export async function diagnoseStore(data: Record<string, unknown>): Promise<DiagnosisResult> {
	let config: StoreConfig;
	try {
		config = toStoreConfig(data);
	} catch (error) {
		return { ok: false, message: describe(error) };
	}
	let client: Client;
	try {
		client = await connect(config, false).catch(async (error: unknown) => {
			if (config.ssl !== 'allow' || sqlStateOf(error) !== SqlState.invalidAuthorization)
				throw error;
			return await connect(config, true);
		});
	} catch (error) {
		return { ok: false, message: connectFailure(error, config) };
	}
	try {
		const { rows } = await client.query<{
			version: string;
			user: string;
			database: string;
			schema_exists: boolean;
			can_create_schema: boolean;
			can_create_in_schema: boolean | null;
		}>(storeAccessSql({ schema: config.schema }));
		const found = rows[0];
		const server = `PostgreSQL ${found.version.split(' ')[0]}`;
		const latest = latestMigrationId();
		if (!found.schema_exists) {
			if (!found.can_create_schema) {
				return {
					ok: false,
					message: `${server}: user "${found.user}" may not create schema "${config.schema}" (missing CREATE privilege on database "${found.database}"). Run as an administrator: GRANT CREATE ON DATABASE ${quoteLiteralIdent(found.database)} TO ${quoteLiteralIdent(found.user)}; or create the schema with the SQL of "npm run migrate:sql" and grant USAGE, CREATE on it.`,
				};
			}
			return {
				ok: true,
				message: `${server}, schema ${config.schema} absent: it will be created on first use`,
			};
		}
		const applied = await appliedMigrationId(client, config.schema);
		if (applied < latest && !found.can_create_in_schema) {
			return {
				ok: false,
				message: `${server}: schema ${config.schema} is at migration ${applied} of ${latest} and user "${found.user}" may not create tables in it (missing CREATE privilege). Run as an administrator: GRANT USAGE, CREATE ON SCHEMA ${quoteLiteralIdent(config.schema)} TO ${quoteLiteralIdent(found.user)};`,
			};
		}
		const pending = applied < latest ? `: the rest is applied on first use` : '';
		return {
			ok: true,
			message: `${server}, schema ${config.schema} at migration ${applied} of ${latest}${pending}`,
		};
	} catch (error) {
		return { ok: false, message: `Connected, but the check failed: ${describe(error)}` };
	} finally {
		await client.end().catch(() => undefined);
	}
}

async function connect(config: StoreConfig, tlsFallback: boolean): Promise<Client> {
	const options = { connectionTimeoutMillis: 8_000 };
	const client = new Client(
		tlsFallback ? toPoolConfig(config, options, true) : toPoolConfig(config, options),
	);
	client.on('error', () => undefined);
	await client.connect();
	return client;
}

function connectFailure(error: unknown, config: StoreConfig): string {
	const where = `${config.host}:${config.port}`;
	const code = sqlStateOf(error);
	const text = error instanceof Error ? error.message : String(error);
	switch (code) {
		case SqlState.invalidPassword:
			return `Wrong password for user "${config.user}" at ${where} (password authentication failed). Check Password in the credential.`;
		case SqlState.invalidAuthorization:
			return `The server at ${where} refused user "${config.user}" for database "${config.database}": ${text}. Check User and SSL, or the server's pg_hba.conf.`;
		case SqlState.invalidCatalogName:
			return `Database "${config.database}" does not exist at ${where}. Create it (CREATE DATABASE ${quoteLiteralIdent(config.database)};) or correct Database.`;
		case 'ECONNREFUSED':
			return `${where} unreachable: connection refused. Is Postgres running there, and are Host and Port right?`;
		case 'ENOTFOUND':
		case 'EAI_AGAIN':
			return `${where} unreachable: host "${config.host}" not found. Check Host.`;
		case 'ETIMEDOUT':
		case 'EHOSTUNREACH':
		case 'ENETUNREACH':
			return `${where} unreachable: ${code}. Check Host, Port and any firewall between n8n and Postgres.`;
	}
	if (/timeout/i.test(text))
		return `${where} unreachable: no answer within 8 seconds. Check Host, Port and any firewall between n8n and Postgres.`;
	if (/SSL|certificate|self[- ]signed/i.test(text))
		return `TLS to ${where} failed: ${text}. Check SSL and CA Certificate.`;
	return `Could not connect to ${where}: ${text}`;
}

function describe(error: unknown): string {
	if (isReliabilityError(error))
		return error.hint ? `${error.message}. ${error.hint}` : error.message;
	return error instanceof Error ? error.message : String(error);
}
