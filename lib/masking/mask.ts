import { ConfigurationError } from '../errors';
import { storableText } from '../store/storable';

/**
 * The one masking module: every place that stores or outputs text that came from outside
 * (payloads, headers, error messages, saved responses, audit reasons, console pages, alerts,
 * metrics labels) passes it through here first. Masking is irreversible and leaves `[masked]`
 * where the secret was, so a reader sees that something was there.
 *
 * - `maskValue` walks a structure (any depth, objects and arrays, n8n's `[{ name, value }]`
 *   header lists, name/value pairs in flat arrays) and replaces the value under every secret
 *   name; every string in it is masked as free text too, and a string that holds JSON is masked
 *   as a structure.
 * - `maskText` masks free text: `key=value`, `key: value` and `"key": "value"` pairs whose key is
 *   a secret name, `Bearer …` and `Basic …` credentials, passwords in URLs, JSON Web Tokens and a
 *   few well-known token formats.
 *
 * A name is compared after dropping case and everything but letters and digits, so `apiKey`,
 * `api_key`, `API-Key` and `api key` are one name. The default names also match as the end of a
 * longer name (`X-Auth-Token`, `db_password`, `stripeApiKey`); names the user adds match whole.
 * Free text is scanned in linear time: a separator is found first and its name read backwards,
 * never a pattern that can backtrack over a long string. What comes out can also be stored: NUL
 * and unpaired surrogates, which Postgres refuses, are replaced (see `storableText`).
 */
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
const HEADER_LINE_NAMES = ['authorization', 'cookie'];

/** `API-Key` -> `apikey`: how two spellings of one name compare. */
const normaliseName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

interface Rules {
	extra: Set<string>;
}

const rulesCache = new Map<string, Rules>();

function rulesFor(extraFields: readonly string[] | undefined): Rules {
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

function isSecretNormalised(name: string, rules: Rules): boolean {
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

// ---------------------------------------------------------------------------------------------
// Free text

const isNameChar = (c: number): boolean =>
	(c >= 48 && c <= 57) || // 0-9
	(c >= 65 && c <= 90) || // A-Z
	(c >= 97 && c <= 122) || // a-z
	c === 95 || // _
	c === 45 || // -
	c === 46; // .

const MAX_NAME = 80;

/** The name before a separator at `sep`, read backwards: `"X-Api-Key"`, `api key`, `token`. */
function nameBefore(text: string, sep: number): { single: string; pair: string } | undefined {
	let j = sep - 1;
	let skipped = 0;
	while (j >= 0 && (text[j] === ' ' || text[j] === '\t') && skipped < 8) {
		j--;
		skipped++;
	}
	// A quoted key: "password": or \"password\": (JSON inside a string).
	while (j >= 0 && (text[j] === '"' || text[j] === "'" || text[j] === '\\') && sep - j < 16) j--;
	const end = j + 1;
	while (j >= 0 && end - j <= MAX_NAME && isNameChar(text.charCodeAt(j))) j--;
	const single = text.slice(j + 1, end);
	if (!single) return undefined;
	// "api key": the word before, when one space separates them.
	let pair = '';
	if (j >= 1 && text[j] === ' ' && isNameChar(text.charCodeAt(j - 1))) {
		let k = j - 1;
		while (k >= 0 && j - k <= MAX_NAME && isNameChar(text.charCodeAt(k))) k--;
		pair = text.slice(k + 1, j) + single;
	}
	return { single, pair };
}

/** Characters that end an unquoted value (`password=abc&next=1`, `token: abc, more`). */
const VALUE_END = new Set([
	' ',
	'\t',
	'\r',
	'\n',
	',',
	';',
	'&',
	'"',
	"'",
	'<',
	'>',
	'(',
	')',
	'{',
	'}',
	'[',
	']',
	'\\',
	'|',
]);
const LINE_END = new Set(['\r', '\n', '"', '\\']);

/** Where the value starting at `start` ends, and how to write its masked form. */
function valueAt(
	text: string,
	start: number,
	headerLine: boolean,
): { end: number; replacement: string } | undefined {
	if (text.startsWith(MASKED, start)) return undefined;
	// A quoted value, possibly escaped k times ("x", \"x\", \\\"x\\\"): it ends at the same quote
	// preceded by the same number of backslashes.
	let k = 0;
	while (text[start + k] === '\\') k++;
	const quote = text[start + k];
	if (quote === '"' || quote === "'") {
		const open = text.slice(start, start + k + 1);
		if (text.startsWith(MASKED, start + k + 1)) return undefined;
		let i = start + k + 1;
		let run = 0;
		while (i < text.length) {
			const c = text[i];
			if (c === '\\') {
				if (k === 0) {
					i += 2; // an escape inside a plain JSON string
					continue;
				}
				run++;
			} else {
				if (c === quote && run === k) return { end: i + 1, replacement: `${open}${MASKED}${open}` };
				run = 0;
			}
			i++;
		}
		return { end: text.length, replacement: `${open}${MASKED}` };
	}
	// An object or array as the value: up to its matching bracket.
	if (text[start] === '{' || text[start] === '[') {
		let depth = 0;
		let inString = false;
		for (let i = start; i < text.length; i++) {
			const c = text[i];
			if (inString) {
				if (c === '\\') i++;
				else if (c === '"') inString = false;
			} else if (c === '"') inString = true;
			else if (c === '{' || c === '[') depth++;
			else if (c === '}' || c === ']') {
				depth--;
				if (depth === 0) return { end: i + 1, replacement: MASKED };
			}
		}
		return { end: text.length, replacement: MASKED };
	}
	const stops = headerLine ? LINE_END : VALUE_END;
	let i = start;
	while (i < text.length && !stops.has(text[i])) i++;
	if (headerLine) while (i > start && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
	if (i === start) return undefined;
	return { end: i, replacement: MASKED };
}

/** `name=value`, `name: value`, `"name": "value"` pairs whose name is a secret. */
function maskPairs(text: string, rules: Rules): string {
	let out = '';
	let copied = 0;
	let i = 0;
	while (i < text.length) {
		const colon = text.indexOf(':', i);
		const equals = text.indexOf('=', i);
		const sep = colon < 0 ? equals : equals < 0 ? colon : Math.min(colon, equals);
		if (sep < 0) break;
		i = sep + 1;
		if (sep < copied) continue;
		const name = nameBefore(text, sep);
		if (!name) continue;
		const single = normaliseName(name.single);
		const secret =
			isSecretNormalised(single, rules) ||
			(name.pair !== '' && isSecretNormalised(normaliseName(name.pair), rules));
		if (!secret) continue;
		let start = sep + 1;
		while (start < text.length && (text[start] === ' ' || text[start] === '\t')) start++;
		// A URL's scheme (`token://`) is not a pair.
		if (text[sep] === ':' && text.startsWith('//', sep + 1)) continue;
		const headerLine = HEADER_LINE_NAMES.some((h) => single.endsWith(h));
		const value = valueAt(text, start, headerLine);
		if (!value) continue;
		out += text.slice(copied, start) + value.replacement;
		copied = value.end;
		i = value.end;
	}
	return copied === 0 ? text : out + text.slice(copied);
}

/** Passwords in URLs: `scheme://user:password@host`. */
function maskUrlPasswords(text: string): string {
	let out = '';
	let copied = 0;
	let from = 0;
	for (;;) {
		const at = text.indexOf('://', from);
		if (at < 0) break;
		from = at + 3;
		let i = from;
		let colon = -1;
		while (i < text.length && i - from < 512) {
			const c = text[i];
			if (c === '@' || c === '/' || c === ' ' || c === '\n' || c === '"' || c === "'") break;
			if (c === ':' && colon < 0) colon = i;
			i++;
		}
		if (text[i] !== '@' || colon < 0 || colon + 1 === i) continue;
		if (text.startsWith(MASKED, colon + 1)) continue;
		out += text.slice(copied, colon + 1) + MASKED;
		copied = i;
		from = i;
	}
	return copied === 0 ? text : out + text.slice(copied);
}

/** Credentials recognisable by their form wherever they appear. */
const TOKEN_PATTERNS: Array<[RegExp, (match: string, ...groups: string[]) => string]> = [
	// Authorization schemes: `Bearer abc…`, `Basic dXNlcjpwYXNz` (a word of plain lowercase
	// letters after "basic" is prose, not a credential).
	[
		/(bearer)(\s+)(?!\[masked\])([^\s"'\\,;<>]+)/gi,
		(_m, scheme, space) => `${scheme}${space}${MASKED}`,
	],
	[
		/\b(basic)(\s+)(?!\[masked\])([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/gi,
		(m, scheme, space, credential) =>
			/^[a-z]+$/.test(credential) && credential.length < 20 ? m : `${scheme}${space}${MASKED}`,
	],
	// JSON Web Tokens.
	[/eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, () => MASKED],
	// Well-known API key formats (Stripe, GitHub, Slack, AWS access key IDs).
	[/\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/g, () => MASKED],
	[/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, () => MASKED],
	[/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, () => MASKED],
	[/\bAKIA[0-9A-Z]{16}\b/g, () => MASKED],
];

/** Cheap test: text without a separator, a URL or a credential word has nothing to mask. */
const MAYBE_SECRET = /[:=@]|bearer|basic|eyJ|_live_|_test_|gh[pousr]_|github_pat_|xox|AKIA/i;

function maskFreeText(text: string, rules: Rules): string {
	if (!MAYBE_SECRET.test(text)) return text;
	let out = maskPairs(text, rules);
	if (out.includes('://')) out = maskUrlPasswords(out);
	for (const [pattern, replace] of TOKEN_PATTERNS)
		out = out.replace(pattern, replace as (substring: string, ...args: string[]) => string);
	return out;
}

/**
 * Masks secrets in free text: an error message, a response body, an operator's note. Text that
 * is a whole JSON document is masked as a structure (and written back compactly when something
 * in it was masked).
 */
export function maskText(text: string, extraFields?: readonly string[]): string {
	if (typeof text !== 'string') return text;
	return maskString(text, rulesFor(extraFields));
}

const MAX_JSON_PARSE = 16 * 1024 * 1024;

function maskString(raw: string, rules: Rules): string {
	const text = storableText(raw);
	const first = text.trimStart()[0];
	if ((first === '{' || first === '[') && text.length <= MAX_JSON_PARSE) {
		let parsed: unknown;
		try {
			parsed = JSON.parse(text);
		} catch {
			parsed = undefined;
		}
		if (parsed !== null && typeof parsed === 'object') {
			const walked = walk(parsed, rules);
			return walked.changed ? JSON.stringify(walked.value) : text;
		}
	}
	return maskFreeText(text, rules);
}

// ---------------------------------------------------------------------------------------------
// Structures

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
	if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
};

/** The key of a `{ name: 'Authorization', value }` entry (n8n's header and query lists). */
const PAIR_NAME_KEYS = ['name', 'key', 'header', 'field'];

/**
 * What a masked structure holds instead of what cannot be stored: a part nested deeper than
 * MAX_DEPTH levels (JSON.stringify and Postgres' json parser both give up far below the depth
 * a hostile payload can reach), and a reference back to an enclosing object.
 */
export const MAX_DEPTH = 1000;
export const CUT_TOO_DEEP = `[cut: nested deeper than ${MAX_DEPTH} levels]`;
export const CIRCULAR = '[circular]';

/**
 * Masks a structure without recursion (an explicit stack). The input is never changed; a shared
 * reference stays shared in the copy, a circular one becomes CIRCULAR and anything below
 * MAX_DEPTH levels becomes CUT_TOO_DEEP, so the copy can always be written as JSON.
 */
function walk(root: unknown, rules: Rules): { value: unknown; changed: boolean } {
	let changed = false;
	const leaf = (value: unknown): unknown => {
		if (typeof value !== 'string') return value;
		const masked = maskString(value, rules);
		if (masked !== value) changed = true;
		return masked;
	};
	if (!Array.isArray(root) && !isPlainObject(root)) return { value: leaf(root), changed };
	interface Frame {
		source: object;
		target: Record<string, unknown> | unknown[];
		parent: Frame | undefined;
		depth: number;
	}
	const copies = new Map<object, unknown>();
	const stack: Frame[] = [];
	const copyOf = (value: unknown, parent: Frame | undefined): unknown => {
		if (!Array.isArray(value) && !isPlainObject(value)) return leaf(value);
		const depth = (parent?.depth ?? 0) + 1;
		if (depth > MAX_DEPTH) {
			changed = true;
			return CUT_TOO_DEEP;
		}
		for (let frame = parent; frame; frame = frame.parent)
			if (frame.source === value) {
				changed = true;
				return CIRCULAR;
			}
		const seen = copies.get(value);
		if (seen !== undefined) return seen;
		const target: Record<string, unknown> | unknown[] = Array.isArray(value)
			? new Array<unknown>(value.length)
			: Object.getPrototypeOf(value) === null
				? (Object.create(null) as Record<string, unknown>)
				: {};
		copies.set(value, target);
		stack.push({ source: value, target, parent, depth });
		return target;
	};
	const masked = (): string => {
		changed = true;
		return MASKED;
	};
	const result = copyOf(root, undefined);
	while (stack.length > 0) {
		const frame = stack.pop()!;
		const { source, target } = frame;
		if (Array.isArray(source)) {
			const out = target as unknown[];
			// A flat name/value list (Node's rawHeaders, [name, value] tuples).
			const pairs = source.length % 2 === 0;
			for (let i = 0; i < source.length; i++) {
				const before = source[i - 1];
				out[i] =
					pairs &&
					i % 2 === 1 &&
					typeof before === 'string' &&
					isSecretNormalised(normaliseName(before), rules)
						? masked()
						: copyOf(source[i], frame);
			}
			continue;
		}
		const object = source as Record<string, unknown>;
		const out = target as Record<string, unknown>;
		const pairName = PAIR_NAME_KEYS.map((k) => object[k]).find((v) => typeof v === 'string') as
			string | undefined;
		const pairSecret =
			pairName !== undefined &&
			'value' in object &&
			isSecretNormalised(normaliseName(pairName), rules);
		for (const key of Object.keys(object)) {
			const child = object[key];
			const outKey = maskString(key, rules);
			if (outKey !== key) changed = true;
			const value =
				isSecretNormalised(normaliseName(key), rules) || (pairSecret && key === 'value')
					? masked()
					: copyOf(child, frame);
			// A "__proto__" key from JSON is data: define it, never set the copy's prototype.
			if (outKey === '__proto__')
				Object.defineProperty(out, outKey, {
					value,
					enumerable: true,
					writable: true,
					configurable: true,
				});
			else out[outKey] = value;
		}
	}
	return { value: result, changed };
}

/**
 * Masks secrets anywhere in a structure: values under secret names (any depth, any spelling),
 * n8n's `[{ name, value }]` lists, and every string as free text (JSON inside a string as a
 * structure). Returns a masked copy that can be stored: the input is not changed.
 */
export function maskValue<T>(value: T, extraFields?: readonly string[]): T {
	return walk(value, rulesFor(extraFields)).value as T;
}
