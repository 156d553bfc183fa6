import { ConfigurationError } from '../errors';

/**
 * What counts as a secret by its name. A name is read as words (`aws_secret_access_key`,
 * `secretKey`, `X-API-Key`, `private key pem`); it is a secret when it ends in a secret name
 * (`X-Auth-Token`, `db_password`, `stripeApiKey`), or when it holds a secret word anywhere
 * (`secret_key`, `api_secret_key`, `private_key_pem`) unless its last word says it is about the
 * secret rather than the secret itself (`token_type`, `password_reset_at`, `api_key_id`).
 * Names the user adds match whole, in any spelling.
 */

/** What a secret is replaced by: irreversible, and a reader sees that something was there. */
export const MASKED = '[masked]';

/**
 * Secret names that also match as the end of a longer name, in the normalised spelling
 * (lowercase letters and digits).
 */
const SECRET_ENDINGS: readonly string[] = [
	'authorization',
	'proxyauthorization',
	'cookie',
	'setcookie',
	'xapikey',
	'apikey',
	'password',
	'passwd',
	'passphrase',
	'pwd',
	'secret',
	'clientsecret',
	'token',
	'accesstoken',
	'refreshtoken',
	'privatekey',
	'secretkey',
	'accesskey',
	'accountkey',
	'sharedaccesskey',
	'signingkey',
	'encryptionkey',
	'masterkey',
];

/** Secret words, one word or two or three run together, that make any name hold a secret. */
const SECRET_WORDS = new Set([
	'secret',
	'secrets',
	'password',
	'passwords',
	'passwd',
	'passphrase',
	'pwd',
	'token',
	'apikey',
	'privatekey',
	'secretkey',
	'accesskey',
	'accountkey',
	'sharedaccesskey',
	'signingkey',
	'encryptionkey',
	'masterkey',
	'credential',
	'credentials',
	'auth',
	'authorization',
	'cookie',
	'sig',
]);

/** A secret word run into one lowercase word with others (`awssecretaccesskey`). */
const SECRET_INSIDE = [
	'password',
	'passwd',
	'passphrase',
	'apikey',
	'apisecret',
	'secretkey',
	'clientsecret',
	'secretaccess',
	'privatekey',
	'accesstoken',
	'refreshtoken',
	'authtoken',
	'accountkey',
];

/**
 * Last words that make a name about a secret, not the secret: `token_type`, `tokenCount`,
 * `password_reset_required`, `api_key_id`, `cookies_accepted`, `auth_method`.
 */
const ABOUT_WORDS = new Set([
	'type',
	'types',
	'count',
	'counts',
	'length',
	'len',
	'id',
	'ids',
	'url',
	'uri',
	'endpoint',
	'path',
	'expiry',
	'expires',
	'expiration',
	'expired',
	'ttl',
	'at',
	'in',
	'time',
	'date',
	'required',
	'accepted',
	'enabled',
	'disabled',
	'policy',
	'hint',
	'name',
	'label',
	'method',
	'mode',
	'scheme',
	'provider',
	'status',
	'set',
	'changed',
	'updated',
	'created',
	'reset',
	'rotated',
	'version',
	'format',
]);

/** Names whose value in free text is a whole header line (`Cookie: a=1; b=2`), not one word. */
export const HEADER_LINE_NAMES = ['authorization', 'cookie'];

/** `API-Key` -> `apikey`: how two spellings of one name compare. */
export const normaliseName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** `aws_secret_access_key`, `secretAccessKey`, `X-API-Key` -> their lowercase words. */
const wordsOf = (name: string): string[] =>
	name
		.replace(/([a-z0-9])([A-Z])/g, '$1 $2')
		.replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
		.toLowerCase()
		.split(/[^a-z0-9]+/)
		.filter(Boolean);

/** The user's extra names for one call, normalised (the defaults always apply). */
export interface Rules {
	extra: Set<string>;
	/** Names already decided, since the same keys come back item after item. */
	decided: Map<string, boolean>;
}

const rulesCache = new Map<string, Rules>();

/** The rules without Mask Fields: what most masking asks for, answered without a lookup. */
const DEFAULT_RULES: Rules = { extra: new Set(), decided: new Map() };

/** The rules for a Mask Fields list, cached per list (masking runs for every stored string). */
export function rulesFor(extraFields: readonly string[] | undefined): Rules {
	if (!Array.isArray(extraFields) || extraFields.length === 0) return DEFAULT_RULES;
	// Masking never fails: names that are not text are ignored (parseMaskFields reports them).
	const names = extraFields.filter((name): name is string => typeof name === 'string');
	const key = names.join('\u0000');
	let rules = rulesCache.get(key);
	if (!rules) {
		rules = { extra: new Set(names.map(normaliseName).filter(Boolean)), decided: new Map() };
		if (rulesCache.size > 100) rulesCache.clear();
		rulesCache.set(key, rules);
	}
	return rules;
}

/** Nothing in a name without one of these can be a secret word: most names end here. */
export const MAYBE_SECRET_NAME = /pass|pwd|secret|token|key|auth|cookie|sig|credential/i;

/** Whether a normalised name ends in a secret name (`xauthtoken`, `dbpassword`). */
export const endsInSecretName = (normalised: string): boolean =>
	SECRET_ENDINGS.some((ending) => normalised.endsWith(ending));

function decide(name: string, rules: Rules): boolean {
	const normalised = normaliseName(name);
	if (!normalised) return false;
	if (rules.extra.has(normalised)) return true;
	if (!MAYBE_SECRET_NAME.test(normalised)) return false;
	if (endsInSecretName(normalised)) return true;
	const words = wordsOf(name);
	if (words.length === 0 || ABOUT_WORDS.has(words[words.length - 1])) return false;
	for (let i = 0; i < words.length; i++) {
		let joined = '';
		for (let j = i; j < Math.min(words.length, i + 3); j++) {
			joined += words[j];
			if (SECRET_WORDS.has(joined)) return true;
		}
	}
	return SECRET_INSIDE.some((word) => normalised.includes(word));
}

/** Whether a field, header or parameter name (as written) is one whose value is masked. */
export function isSecretKey(name: string, rules: Rules): boolean {
	// Most names have no secret word at all: decided without normalising or caching them (free
	// text brings a new "name" before every `=` and `:`).
	if (!MAYBE_SECRET_NAME.test(name))
		return rules.extra.size > 0 && rules.extra.has(normaliseName(name));
	if (name.length > 200) return decide(name, rules);
	let secret = rules.decided.get(name);
	if (secret === undefined) {
		secret = decide(name, rules);
		if (rules.decided.size > 10_000) rules.decided.clear();
		rules.decided.set(name, secret);
	}
	return secret;
}

/** Whether a field or header name is one whose value is masked. */
export function isSecretName(name: string, extraFields?: readonly string[]): boolean {
	return isSecretKey(name, rulesFor(extraFields));
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
