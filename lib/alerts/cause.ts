import { createHash } from 'node:crypto';

/**
 * What makes failures "the same cause": the integration, the workflow, the step, the error class
 * and the message with what differs per item taken out (numbers, IDs, quoted values, e-mail
 * addresses, URLs), so 300 leads refused for `phone: invalid format "0151 2345678"`, `"030 99"`,
 * ... are one issue, and a different message is another.
 */
export interface CauseParts {
	integration: string | null;
	workflowId: string | null;
	step: string | null;
	errorClass: string | null;
	message: string;
}

const PER_ITEM: Array<[RegExp, string]> = [
	// Quoted values first: what is inside them is the item's own data.
	[/"[^"\n]*"|'[^'\n]*'|`[^`\n]*`/g, '"…"'],
	[/\bhttps?:\/\/\S+/gi, '<url>'],
	[/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, '<email>'],
	[/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
	// Long hex or mixed letter-digit tokens (keys, hashes, record IDs such as INV-20931).
	[/\b(?=[\w-]*\d)[A-Za-z0-9_-]{6,}\b/g, '<id>'],
	[/\d+(?:[.,]\d+)*/g, '<n>'],
	[/\s+/g, ' '],
];

/** The message as the cause reads it: lower-cased, per-item parts replaced, at most 300 characters. */
export function normalizedMessage(message: string): string {
	let text = message;
	for (const [pattern, replacement] of PER_ITEM) text = text.replace(pattern, replacement);
	return text.trim().toLowerCase().slice(0, 300);
}

/** The cause's identity, stable across processes and versions of the text above it. */
export function causeKey(parts: CauseParts): string {
	return createHash('sha256')
		.update(
			JSON.stringify([
				parts.integration ?? '',
				parts.workflowId ?? '',
				parts.step ?? '',
				parts.errorClass ?? '',
				normalizedMessage(parts.message),
			]),
		)
		.digest('hex');
}
