import { ConfigurationError } from '../errors';

/**
 * What counts as a secret. A name is compared after dropping case and everything but letters and
 * digits, so `apiKey`, `api_key`, `API-Key` and `api key` are one name. The default names also
 * match as the end of a longer name (`X-Auth-Token`, `db_password`, `stripeApiKey`); names the
 * user adds match whole.
 */

/** What a secret is replaced by: irreversible, and a reader sees that something was there. */
export const MASKED = '[masked]';

/** The secret names masked by default, in the normalised spelling (lowercase letters and digits). */
const DEFAULT_SECRET_NAMES: readonly string[] = [
	'authorization',
	'proxyauthorization',
	'cookie',
	'setcookie',
	'xapikey',
	'apikey',
	'password',
	'passwd',
	'secret',
	'clientsecret',
	'token',
	'accesstoken',
	'refreshtoken',
	'privatekey',
];

/** Names whose value in free text is a whole header line (`Cookie: a=1; b=2`), not one word. */
export const HEADER_LINE_NAMES = ['authorization', 'cookie'];

/** `API-Key` -> `apikey`: how two spellings of one name compare. */
export const normaliseName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The user's extra names for one call, normalised (the defaults always apply). */
export interface Rules {
	extra: Set<string>;
}

const rulesCache = new Map<string, Rules>();

/** The rules for a Mask Fields list, cached per list (masking runs for every stored string). */
export function rulesFor(extraFields: readonly string[] | undefined): Rules {
	// Masking never fails: names that are not text are ignored (parseMaskFields reports them).
	const names = Array.isArray(extraFields)
		? extraFields.filter((name): name is string => typeof name === 'string')
		: [];
	const key = names.join('\u0000');
	let rules = rulesCache.get(key);
	if (!rules) {
		rules = { extra: new Set(names.map(normaliseName).filter(Boolean)) };
		if (rulesCache.size > 100) rulesCache.clear();
		rulesCache.set(key, rules);
	}
	return rules;
}

/** Whether a normalised name is a secret: one the user named, or ending in a default name. */
export function isSecretNormalised(name: string, rules: Rules): boolean {
	if (!name) return false;
	if (rules.extra.has(name)) return true;
	for (const secret of DEFAULT_SECRET_NAMES) if (name.endsWith(secret)) return true;
	return false;
}

/** Whether a field or header name is one whose value is masked. */
export function isSecretName(name: string, extraFields?: readonly string[]): boolean {
	return isSecretNormalised(normaliseName(name), rulesFor(extraFields));
}

/**
 * The field names of a *Mask Fields* option: comma-separated (newlines and semicolons work too),
 * blanks dropped. A list of names is taken as it is.
 */
export function parseMaskFields(option: unknown): string[] {
	if (option === undefined || option === null || option === '') return [];
	const parts = Array.isArray(option)
		? option
		: typeof option === 'string'
			? option.split(/[,;\n]/)
			: undefined;
	if (!parts || parts.some((part) => typeof part !== 'string'))
		throw new ConfigurationError(
			'Mask Fields must be field names separated by commas',
			'Write the names of the fields to mask, for example "ssn, iban, pin".',
		);
	return (parts as string[]).map((part) => part.trim()).filter(Boolean);
}
