import { ConfigurationError } from '../errors';

/**
 * Schema names are the one identifier that comes from configuration. They are checked against
 * a strict pattern (lowercase, so the quoted and unquoted spellings name the same schema) and
 * then always quoted; nothing from user input is ever spliced into SQL otherwise.
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function validateSchemaName(name: unknown): string {
	if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
		throw new ConfigurationError(
			`Schema name ${JSON.stringify(name)} is not a valid identifier`,
			'Use 1 to 63 lowercase letters, digits and underscores, starting with a letter or underscore (for example n8n_reliability).',
		);
	}
	if (name.startsWith('pg_')) {
		throw new ConfigurationError(
			`Schema name "${name}" is reserved by PostgreSQL`,
			'Names starting with pg_ belong to the system; choose another, for example n8n_reliability.',
		);
	}
	return name;
}

/** Double-quotes an identifier that has already been validated. */
export const quoteIdent = (name: string): string => `"${validateSchemaName(name)}"`;
