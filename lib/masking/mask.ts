import { rulesFor } from './rules';
import { storableValue } from '../store/storable';
import { maskString, walk } from './structure';

/**
 * The one masking module: every place that stores or outputs text that came from outside
 * (payloads, headers, error messages, saved responses, audit reasons, console pages, alerts,
 * metrics labels) passes it through here first. Masking is irreversible and leaves `[masked]`
 * where the secret was, so a reader sees that something was there. What counts as a secret is
 * in rules.ts; free text is masked by freeText.ts, structures (and text that holds JSON) by
 * structure.ts.
 */

/**
 * Masks secrets in free text: an error message, a response body, an operator's note. Text that
 * is a whole JSON document is masked as a structure (and written back compactly when something
 * in it was masked).
 */
export function maskText(text: string, extraFields?: readonly string[]): string {
	if (typeof text !== 'string') return text;
	return maskString(text, rulesFor(extraFields));
}

/**
 * Masks secrets anywhere in a structure: values under secret names (any depth, any spelling),
 * n8n's `[{ name, value }]` lists, and every string as free text (JSON inside a string as a
 * structure). Returns a masked copy that can be stored: the input is not changed.
 */
export function maskValue<T>(value: T, extraFields?: readonly string[]): T {
	return walk(value, rulesFor(extraFields)).value as T;
}

/**
 * maskValue for a value about to be stored, and its stored form. The masked copy (`value`) is
 * storable as it is, every string and key in it having been masked, unless the walk copied a
 * part unwalked (a class instance, a Buffer): only then is `stored` a second, storable copy
 * (storableValue), instead of walking every value twice.
 */
export function maskForStore<T>(
	value: T,
	extraFields?: readonly string[],
): { value: T; stored: T } {
	const walked = walk(value, rulesFor(extraFields));
	const masked = walked.value as T;
	return { value: masked, stored: walked.opaque ? storableValue(masked) : masked };
}
