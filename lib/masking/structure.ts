import { storableText } from '../store/storable';
import { maskFreeText } from './freeText';
import { isSecretKey, MASKED, type Rules } from './rules';

/**
 * Masking structures: values under secret names at any depth, n8n's `[{ name, value }]` lists,
 * name/value pairs in flat arrays, and every string as free text, or as a structure when it holds
 * JSON. What comes out can be stored: NUL and unpaired surrogates, which Postgres refuses, are
 * replaced (see `storableText`).
 */

const MAX_JSON_PARSE = 16 * 1024 * 1024;

/** A string masked as a structure when it is a JSON document, else as free text. */
export function maskString(raw: string, rules: Rules): string {
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
export function walk(
	root: unknown,
	rules: Rules,
): { value: unknown; changed: boolean; opaque: boolean } {
	let changed = false;
	// An object that is neither plain, an array nor a Date (a class instance, a Buffer) is copied
	// as it is, unwalked: the caller that stores the copy must make it storable itself.
	let opaque = false;
	const leaf = (value: unknown): unknown => {
		if (typeof value !== 'string') {
			if (value !== null && typeof value === 'object' && !(value instanceof Date)) opaque = true;
			return value;
		}
		const masked = maskString(value, rules);
		if (masked !== value) changed = true;
		return masked;
	};
	if (!Array.isArray(root) && !isPlainObject(root)) return { value: leaf(root), changed, opaque };
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
					pairs && i % 2 === 1 && typeof before === 'string' && isSecretKey(before, rules)
						? masked()
						: copyOf(source[i], frame);
			}
			continue;
		}
		const object = source as Record<string, unknown>;
		const out = target as Record<string, unknown>;
		const pairName = PAIR_NAME_KEYS.map((k) => object[k]).find((v) => typeof v === 'string') as
			string | undefined;
		const pairSecret = pairName !== undefined && 'value' in object && isSecretKey(pairName, rules);
		for (const key of Object.keys(object)) {
			const child = object[key];
			const outKey = maskString(key, rules);
			if (outKey !== key) changed = true;
			const value =
				isSecretKey(key, rules) || (pairSecret && key === 'value')
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
	return { value: result, changed, opaque };
}
