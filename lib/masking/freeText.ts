import { HEADER_LINE_NAMES, isSecretNormalised, MASKED, normaliseName, type Rules } from './rules';

/**
 * Masking free text: `key=value`, `key: value` and `"key": "value"` pairs whose key is a secret
 * name, `Bearer …` and `Basic …` credentials, passwords in URLs, JSON Web Tokens and a few
 * well-known token formats. Text is scanned in linear time: a separator is found first and its
 * name read backwards, never a pattern that can backtrack over a long string.
 */

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

export function maskFreeText(text: string, rules: Rules): string {
	if (!MAYBE_SECRET.test(text)) return text;
	let out = maskPairs(text, rules);
	if (out.includes('://')) out = maskUrlPasswords(out);
	for (const [pattern, replace] of TOKEN_PATTERNS)
		out = out.replace(pattern, replace as (substring: string, ...args: string[]) => string);
	return out;
}
