import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { ItemError, plainText } from '../../lib';

/** A parameter's value as trimmed text: nothing is '', an object its JSON. */
export const trimmedText = (value: unknown): string => plainText(value).trim();

/** `trimmedText`, or undefined when empty. */
export const optionalText = (value: unknown): string | undefined => trimmedText(value) || undefined;

/**
 * Reads a per-item parameter for every item of a run. n8n evaluates an expression per item, at
 * about half a millisecond each on n8n 2.x, which would dominate a node that handles 10,000
 * items with one SQL statement. The overwhelmingly common form, a plain `{{ $json }}`,
 * `{{ $json.a.b }}` or `{{ $json["a"].b }}`, is read straight from the item, which is exactly what n8n would
 * compute for it; anything else goes through n8n's expression engine as usual.
 */
const SIMPLE_JSON_PATH =
	/^=\{\{\s*\$json((?:\.[A-Za-z_$][\w$]*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\])*)\s*\}\}$/;
const SEGMENT = /\.([A-Za-z_$][\w$]*)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+))\s*\]/g;

export function jsonPathOf(raw: unknown): string[] | undefined {
	if (typeof raw !== 'string') return undefined;
	const match = SIMPLE_JSON_PATH.exec(raw.trim());
	if (!match) return undefined;
	return [...match[1].matchAll(SEGMENT)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]);
}

export type ItemValueReader = (itemIndex: number) => unknown;

/** Whether a raw parameter value holds an expression anywhere (a string starting with "="). */
export function hasExpression(raw: unknown): boolean {
	if (typeof raw === 'string') return raw.startsWith('=');
	if (Array.isArray(raw)) return raw.some(hasExpression);
	if (raw !== null && typeof raw === 'object') return Object.values(raw).some(hasExpression);
	return false;
}

export function itemValueReader(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	name: string,
	fallback: unknown = '',
): ItemValueReader {
	const raw = context.getNode().parameters[name];
	// A value without expressions is the same for every item: read it once.
	if (!hasExpression(raw)) {
		const value = context.getNodeParameter(name, 0, fallback);
		return () => value;
	}
	const path = jsonPathOf(raw);
	if (!path) return (itemIndex) => context.getNodeParameter(name, itemIndex, fallback);
	return (itemIndex) =>
		path.reduce<unknown>(
			(value, key) =>
				value !== null && typeof value === 'object' ? (value as IDataObject)[key] : undefined,
			items[itemIndex]?.json,
		);
}

/** A required per-item value as text; empty is a clear error naming the item. */
export function requiredText(
	read: ItemValueReader,
	label: string,
	itemIndex: number,
	hint: string,
): string {
	const text = trimmedText(read(itemIndex));
	if (!text) throw new ItemError(`Item ${itemIndex} has no ${label}`, itemIndex, hint);
	return text;
}
