/**
 * A write step's compensating action, kept with its key record: a request that reverses it,
 * filled in from the step's saved response when Compensate runs, or a repair plan for a person.
 */

export type Compensation =
	| { kind: 'request'; method: string; url: string; body?: string }
	| { kind: 'manual'; plan: string };

/** A compensating request with its placeholders filled in. */
export interface CompensatingRequest {
	method: string;
	url: string;
	body?: unknown;
}

/** `{{ $json.path.to.value }}`: a value of the step's saved response body. */
const PLACEHOLDER = /\{\{\s*\$json((?:\.[A-Za-z_$][\w$]*|\[\d+\])*)\s*\}\}/g;

function valueAt(source: unknown, path: string): unknown {
	const parts = path.match(/[A-Za-z_$][\w$]*|\d+/g) ?? [];
	let value = source;
	for (const part of parts) {
		if (value === null || typeof value !== 'object') return undefined;
		value = (value as Record<string, unknown>)[part];
	}
	return value;
}

/** Fills a template; a placeholder the response does not have is an error naming it. */
function fill(template: string, response: unknown, encode: (value: string) => string): string {
	return template.replace(PLACEHOLDER, (whole: string, path: string) => {
		const value = valueAt(response, path);
		if (value === undefined || value === null)
			throw new Error(`the saved response has no value at $json${path} (for ${whole})`);
		return encode(typeof value === 'object' ? JSON.stringify(value) : String(value));
	});
}

/**
 * The compensating request of a step from its saved response body. Values go into the URL
 * percent-encoded, and into the body as text (a body template that is JSON stays JSON).
 */
export function compensatingRequest(
	compensation: Extract<Compensation, { kind: 'request' }>,
	response: unknown,
): CompensatingRequest {
	const url = fill(compensation.url, response, encodeURIComponent);
	if (compensation.body === undefined || compensation.body.trim() === '')
		return { method: compensation.method.toUpperCase(), url };
	const text = fill(compensation.body, response, (value) => JSON.stringify(value).slice(1, -1));
	let body: unknown = text;
	try {
		body = JSON.parse(text);
	} catch {
		/* a text body stays text */
	}
	return { method: compensation.method.toUpperCase(), url, body };
}
