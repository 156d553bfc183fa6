import { ConfigurationError } from '../../lib/errors';
import {
	quoteIdent,
	storeKey,
	toPoolConfig,
	toStoreConfig,
	validateSchemaName,
} from '../../lib/store';
import { loadMigrations, migrationScript } from '../../lib/store/migrations';

const base = {
	host: 'db.internal',
	port: 5432,
	database: 'app',
	user: 'n8n',
	password: 'secret',
	ssl: 'disable',
	schema: 'n8n_reliability',
	maxConnections: 5,
};

describe('schema names', () => {
	it.each(['n8n_reliability', '_private', 'a', 'tenant_42'])('accepts %s', (name) => {
		expect(validateSchemaName(name)).toBe(name);
	});

	it.each([
		'',
		'Upper',
		'1starts_with_digit',
		'has-dash',
		'x; DROP TABLE users',
		'pg_catalog',
		'a'.repeat(64),
		'quo"te',
	])('refuses %j with a message that says what to use', (name) => {
		expect(() => validateSchemaName(name)).toThrow(ConfigurationError);
		try {
			validateSchemaName(name);
		} catch (error) {
			expect((error as ConfigurationError).hint).toMatch(/letters|choose another/);
		}
	});

	it('quotes a validated name', () => {
		expect(quoteIdent('n8n_reliability')).toBe('"n8n_reliability"');
	});
});

describe('credential fields', () => {
	it('reads a full credential', () => {
		expect(toStoreConfig(base)).toEqual({ ...base, ca: undefined });
	});

	it('defaults the schema when it is left empty', () => {
		expect(toStoreConfig({ ...base, schema: '' }).schema).toBe('n8n_reliability');
	});

	it.each([
		[{ port: 70000 }, /Port 70000 is not a TCP port/],
		[{ port: 'abc' }, /is not a TCP port/],
		[{ ssl: 'prefer' }, /SSL mode "prefer" is unknown/],
		[{ ssl: 'verify' }, /needs the certificate authority/],
		[{ maxConnections: 0 }, /Max connections 0 is out of range/],
		[{ schema: 'Bad-Name' }, /not a valid identifier/],
		[{ host: ' ' }, /has no host/],
	])('refuses %j', (override, message) => {
		expect(() => toStoreConfig({ ...base, ...override })).toThrow(message);
	});

	it('keys pools by every connection field', () => {
		const a = toStoreConfig(base);
		expect(storeKey(a)).toBe(storeKey(toStoreConfig({ ...base })));
		expect(storeKey(a)).not.toBe(storeKey(toStoreConfig({ ...base, password: 'other' })));
		expect(storeKey(a)).not.toBe(storeKey(toStoreConfig({ ...base, schema: 'other_schema' })));
	});

	it('maps SSL modes to TLS settings', () => {
		expect(toPoolConfig(toStoreConfig(base)).ssl).toBe(false);
		expect(toPoolConfig(toStoreConfig({ ...base, ssl: 'allow' })).ssl).toBe(false);
		expect(toPoolConfig(toStoreConfig({ ...base, ssl: 'allow' }), {}, true).ssl).toEqual({
			rejectUnauthorized: false,
		});
		expect(toPoolConfig(toStoreConfig({ ...base, ssl: 'require' })).ssl).toEqual({
			rejectUnauthorized: false,
		});
		expect(toPoolConfig(toStoreConfig({ ...base, ssl: 'verify', ca: 'PEM' })).ssl).toEqual({
			ca: 'PEM',
			rejectUnauthorized: true,
		});
		expect(toPoolConfig(toStoreConfig(base)).max).toBe(5);
	});
});

describe('migrations', () => {
	it('are numbered from 1 without gaps', () => {
		const migrations = loadMigrations();
		expect(migrations.length).toBeGreaterThan(0);
		migrations.forEach((m, i) => expect(m.id).toBe(i + 1));
	});

	it('print as one script for the chosen schema, with no placeholder left', () => {
		const script = migrationScript('ops_store');
		expect(script).toContain('CREATE SCHEMA IF NOT EXISTS "ops_store"');
		expect(script).toContain('"ops_store".processed_events');
		expect(script).not.toContain(':SCHEMA');
		expect(script.match(/^BEGIN;$/gm)).toHaveLength(loadMigrations().length);
	});
});
