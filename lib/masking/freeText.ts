import {
	endsInSecretName,
	HEADER_LINE_NAMES,
	isSecretKey,
	MASKED,
	MAYBE_SECRET_NAME,
	normaliseName,
	type Rules,
} from './rules';

/**
 * Masking free text: `key=value`, `key: value` and `"key": "value"` pairs whose key is a secret
 * name, "password X" in prose, `Bearer …` and `Basic …` credentials, passwords in URLs, and
 * values shaped like credentials whatever their name: private-key PEM blocks, JSON Web Tokens
 * and the token formats public secret scanners recognise by their prefix. Text is scanned in
 * linear time: each pass finds a separator or a prefix first and reads on from there, and
 * never goes back over what it passed, so a hostile text of megabytes costs milliseconds.
 */

const isNameChar = (c: number): boolean =>
	(c >= 48 && c <= 57) || // 0-9
	(c >= 65 && c <= 90) || // A-Z
	(c >= 97 && c <= 122) || // a-z
	c === 95 || // _
	c === 45 || // -
	c === 46; // .

const MAX_NAME = 80;
/** How far before its separator `nameBefore` reads: spaces, quotes, a name and the word before. */
const NAME_REACH = 8 + 16 + 2 * (MAX_NAME + 1);

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
		pair = `${text.slice(k + 1, j)} ${single}`;
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

/** Whether text[from, to) is only `=` signs. */
function isPadding(text: string, from: number, to: number): boolean {
	for (let i = from; i < to; i++) if (text[i] !== '=') return false;
	return true;
}

/** `name=value`, `name: value`, `"name": "value"` pairs whose name is a secret. */
function maskPairs(text: string, rules: Rules): string {
	let out = '';
	let copied = 0;
	let i = 0;
	// The next of each separator, searched again only once passed: one indexOf per separator
	// over the whole text, not one per step (a text of many `=` and no `:` was quadratic).
	let colon = -2;
	let equals = -2;
	// Where the last word that can start a secret name ended: a separator far past it has no
	// secret name before it, and is passed without reading its name (unless the user named
	// fields of their own, which can be any word).
	const stems = new RegExp(MAYBE_SECRET_NAME.source, 'gi');
	let stemEnd = -Infinity;
	let nextStem = stems.exec(text);
	const anyName = rules.extra.size > 0;
	while (i < text.length) {
		if (colon !== -1 && colon < i) colon = text.indexOf(':', i);
		if (equals !== -1 && equals < i) equals = text.indexOf('=', i);
		const sep = colon < 0 ? equals : equals < 0 ? colon : Math.min(colon, equals);
		if (sep < 0) break;
		i = sep + 1;
		if (sep < copied) continue;
		while (nextStem && nextStem.index < sep) {
			stemEnd = nextStem.index + nextStem[0].length;
			nextStem = stems.exec(text);
		}
		if (!anyName && sep - stemEnd > NAME_REACH) continue;
		const name = nameBefore(text, sep);
		if (!name) continue;
		// Two words of prose ("the api key: …") count only when they end in a secret name.
		const secret =
			isSecretKey(name.single, rules) ||
			(name.pair !== '' && endsInSecretName(normaliseName(name.pair)));
		if (!secret) continue;
		let start = sep + 1;
		while (start < text.length && (text[start] === ' ' || text[start] === '\t')) start++;
		// A URL's scheme (`token://`) is not a pair.
		if (text[sep] === ':' && text.startsWith('//', sep + 1)) continue;
		const single = normaliseName(name.single);
		const headerLine = HEADER_LINE_NAMES.some((h) => single.endsWith(h));
		const value = valueAt(text, start, headerLine);
		if (!value) continue;
		// Base64 padding, not a pair: a blob whose last letters spell a name (`…ADSig==`,
		// `…Token==`) ends in `=` signs, and nothing but `=` is no secret.
		if (text[sep] === '=' && isPadding(text, start, value.end)) continue;
		out += text.slice(copied, start) + value.replacement;
		copied = value.end;
		i = value.end;
	}
	return copied === 0 ? text : out + text.slice(copied);
}

/**
 * "password hunter2", "the passphrase is c0rrect-h0rse" in prose: the word after a password
 * word (and an "is" or "was") when it looks like one, six characters or more with a digit, a
 * symbol or a capital inside; "password reset failed" stays as it is.
 */
const PASSWORD_WORD = /\b(?:pass(?:word|wd|phrase)|pwd)\b/gi;
const PROSE_VALUE_END = new Set([...VALUE_END, '(', ')', '[', ']', '{', '}']);
const looksLikePassword = (word: string): boolean =>
	word.length >= 6 && (/[^A-Za-z]/.test(word) || /[A-Z]/.test(word.slice(1)));

function maskProsePasswords(text: string): string {
	let out = '';
	let copied = 0;
	const words = new RegExp(PASSWORD_WORD);
	const spacesFrom = (at: number): number => {
		let i = at;
		while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
		return i;
	};
	const wordFrom = (at: number): number => {
		let i = at;
		while (i < text.length && !PROSE_VALUE_END.has(text[i])) i++;
		return i;
	};
	for (let found = words.exec(text); found; found = words.exec(text)) {
		let start = spacesFrom(found.index + found[0].length);
		if (start === found.index + found[0].length) continue;
		let end = wordFrom(start);
		const verb = text.slice(start, end).toLowerCase();
		if (verb === 'is' || verb === 'was') {
			const next = spacesFrom(end);
			if (next === end) continue;
			start = next;
			end = wordFrom(start);
		}
		const value = text.slice(start, end);
		words.lastIndex = end;
		if (value.startsWith(MASKED) || !looksLikePassword(value)) continue;
		out += text.slice(copied, start) + MASKED;
		copied = end;
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

/**
 * Private keys in PEM form (`-----BEGIN RSA PRIVATE KEY-----` … `-----END RSA PRIVATE KEY-----`,
 * also EC, DSA, OPENSSH, ENCRYPTED and PGP's `PRIVATE KEY BLOCK`): the whole block, or all that
 * follows its start when its end is missing (cut, or escaped into one line).
 */
function maskPemBlocks(text: string): string {
	let out = '';
	let copied = 0;
	let from = 0;
	for (;;) {
		const begin = text.indexOf('-----BEGIN ', from);
		if (begin < 0) break;
		const labelEnd = text.indexOf('-----', begin + 11);
		if (labelEnd < 0) break;
		const label = text.slice(begin + 11, labelEnd);
		from = labelEnd;
		if (label.length > 40 || !label.includes('PRIVATE KEY')) continue;
		const marker = `-----END ${label}-----`;
		const end = text.indexOf(marker, labelEnd + 5);
		const stop = end < 0 ? text.length : end + marker.length;
		out += text.slice(copied, begin) + MASKED;
		copied = stop;
		from = stop;
	}
	return copied === 0 ? text : out + text.slice(copied);
}

const isBase64Url = (c: number): boolean =>
	(c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;

/** Where the run of base64url characters starting at `from` ends. */
function runEnd(text: string, from: number): number {
	let i = from;
	while (i < text.length && isBase64Url(text.charCodeAt(i))) i++;
	return i;
}

/**
 * JSON Web Tokens: `eyJ…` header, `.eyJ…` claims, `.` signature. Scanned by hand: a pattern
 * retried at every `eyJ` of a long run would read the run again each time.
 */
function maskJwts(text: string): string {
	let out = '';
	let copied = 0;
	let from = 0;
	for (;;) {
		const at = text.indexOf('eyJ', from);
		if (at < 0) break;
		const header = runEnd(text, at);
		// Every later `eyJ` of this run ends where it ends, and fails as it failed.
		from = header;
		if (header - at < 7 || text[header] !== '.' || !text.startsWith('eyJ', header + 1)) continue;
		const claims = runEnd(text, header + 1);
		if (claims - header - 1 < 7 || text[claims] !== '.') {
			from = header + 1;
			continue;
		}
		const end = runEnd(text, claims + 1);
		out += text.slice(copied, at) + MASKED;
		copied = end;
		from = end;
	}
	return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Credentials recognisable by their form wherever they appear. The token formats are the
 * high-confidence, prefixed ones of public secret scanners (gitleaks, TruffleHog, GitHub secret
 * scanning); each pattern starts with a literal prefix and never has to give back a long match,
 * so it runs in linear time.
 */
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
	// Stripe secret, restricted and webhook-signing keys.
	[/\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{8,}/g, () => MASKED],
	[/\bwhsec_[A-Za-z0-9]{20,}/g, () => MASKED],
	// GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens.
	[/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, () => MASKED],
	// Slack tokens and incoming-webhook URLs.
	[/\bxox[abeposr]-[A-Za-z0-9-]{10,}/g, () => MASKED],
	[/\bxapp-\d-[A-Za-z0-9-]{10,}/g, () => MASKED],
	[
		/(https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/]+/g,
		(_m, prefix) => `${prefix}${MASKED}`,
	],
	// AWS access key IDs (long-term and temporary).
	[/\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, () => MASKED],
	// Google API keys.
	[/\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g, () => MASKED],
	// GitLab personal access tokens, npm tokens, SendGrid keys.
	[/\bglpat-[A-Za-z0-9_-]{20,}/g, () => MASKED],
	[/\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g, () => MASKED],
	[/\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g, () => MASKED],
	// OpenAI and Anthropic API keys.
	[/\bsk-(?:proj|svcacct|admin|ant-api\d\d|ant-admin\d\d)-[A-Za-z0-9_-]{20,}/g, () => MASKED],
	[/\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}/g, () => MASKED],
];

/** Cheap test: text without a separator, a password word or a token prefix has nothing to mask. */
const MAYBE_SECRET =
	/[:=@]|bearer|basic|pass|pwd|eyJ|-----BEGIN|_live_|_test_|_prod_|whsec_|gh[pousr]_|github_pat_|xox|xapp-|A3T|AKIA|ASIA|ABIA|ACCA|AIza|glpat-|npm_|SG\.|sk-/i;

export function maskFreeText(text: string, rules: Rules): string {
	if (!MAYBE_SECRET.test(text)) return text;
	let out = text.includes('-----BEGIN ') ? maskPemBlocks(text) : text;
	out = maskPairs(out, rules);
	out = maskProsePasswords(out);
	if (out.includes('://')) out = maskUrlPasswords(out);
	if (out.includes('eyJ')) out = maskJwts(out);
	for (const [pattern, replace] of TOKEN_PATTERNS)
		out = out.replace(pattern, replace as (substring: string, ...args: string[]) => string);
	return out;
}
