import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
} from 'n8n-workflow';
import { ItemError } from '../../lib';
import type { ItemValueReader } from '../shared/itemValues';

/** A fixed collection's name/value pairs (query, headers, form fields), unnamed ones left out. */
export const pairs = (value: unknown): Array<{ name: string; value: string }> =>
	((value as { parameter?: Array<{ name: string; value: string }> })?.parameter ?? []).filter(
		(p) => p.name,
	);

/** The parameters that say whether there is a body and how it is encoded. */
export interface BodyReaders {
	sendBody: ItemValueReader;
	contentType: ItemValueReader;
	jsonBody: ItemValueReader;
}

/**
 * Encodes an item's body into the request options, and its content type into the headers, as
 * n8n's HTTP helpers take them (form-urlencoded, raw or JSON). Returns the body as the request's
 * fingerprint sees it; undefined when there is none (Send Body off, or a DELETE).
 */
export function encodeBody(
	context: IExecuteFunctions,
	read: BodyReaders,
	method: IHttpRequestMethods,
	index: number,
	headers: IDataObject,
	options: IHttpRequestOptions,
): unknown {
	if (read.sendBody(index) === false || method === 'DELETE') return undefined;
	const type = read.contentType(index);
	if (type === 'form-urlencoded') {
		const form = Object.fromEntries(
			pairs(context.getNodeParameter('bodyParameters', index, {})).map((p) => [p.name, p.value]),
		);
		options.body = new URLSearchParams(form).toString();
		headers['content-type'] = 'application/x-www-form-urlencoded';
		return form;
	}
	if (type === 'raw') {
		const body = String(context.getNodeParameter('rawBody', index, ''));
		options.body = body;
		headers['content-type'] = String(
			context.getNodeParameter('rawContentType', index, 'text/plain'),
		);
		return body;
	}
	const raw = read.jsonBody(index);
	if (raw === undefined || raw === null)
		throw new ItemError(
			`Item ${index}: the JSON body is empty (its expression gave nothing)`,
			index,
			"Set JSON to what the target should receive: {{ $json.body }} takes a Webhook item's body, {{ $json }} the whole item. To send no body, turn Send Body off. Nothing was sent.",
		);
	let body: unknown = raw;
	if (typeof raw === 'string') {
		try {
			body = raw.trim() ? JSON.parse(raw) : {};
		} catch {
			throw new ItemError(
				`Item ${index}: the JSON body is not valid JSON`,
				index,
				'Fix the JSON field; nothing was sent.',
			);
		}
	}
	options.body = body as IDataObject;
	options.json = true;
	return body;
}
