import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';
import {
	businessKey,
	checkedKey,
	type Compensation,
	inRange,
	LIMITS,
	headerValue,
	ItemError,
	requestFingerprint,
	type WriteRequest,
} from '../../lib';
import { itemValueReader } from '../shared/itemValues';
import { text, type WriteSettings } from './settings';

/**
 * Request building: each item's URL, key, query, headers, body and authentication, as n8n's
 * HTTP helpers take them. A bad item gets an ItemError that names it and says what to fix.
 */
export interface PreparedRequest extends WriteRequest {
	options: IHttpRequestOptions;
	lookupUrl?: string;
}

const pairs = (value: unknown): Array<{ name: string; value: string }> =>
	((value as { parameter?: Array<{ name: string; value: string }> })?.parameter ?? []).filter(
		(p) => p.name,
	);

const KEY_PARTS = {
	source: 'Source System',
	recordId: 'Record ID',
	action: 'Action',
	version: 'Record Version',
} as const;

export async function requestBuilder(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	settings: WriteSettings,
) {
	const { authentication } = settings;
	const credentials =
		authentication === 'none' || authentication === 'oAuth2Api'
			? undefined
			: ((await context.getCredentials(authentication)) as IDataObject);
	const method = context.getNodeParameter('method', 0, 'POST') as IHttpRequestMethods;
	const read = {
		url: itemValueReader(context, items, 'url'),
		keyMode: itemValueReader(context, items, 'keyMode', 'business'),
		source: itemValueReader(context, items, 'keySource'),
		recordId: itemValueReader(context, items, 'keyRecordId'),
		action: itemValueReader(context, items, 'keyAction'),
		version: itemValueReader(context, items, 'keyVersion'),
		customKey: itemValueReader(context, items, 'customKey'),
		sendBody: itemValueReader(context, items, 'sendBody', true),
		contentType: itemValueReader(context, items, 'contentType', 'json'),
		jsonBody: itemValueReader(context, items, 'jsonBody', '{}'),
		timeout: itemValueReader(context, items, 'timeout', 10_000),
		lookupUrl:
			settings.onUnknown === 'lookup' ? itemValueReader(context, items, 'lookupUrl') : undefined,
		itemReference: itemValueReader(context, items, 'idempotency', {}),
		plan:
			settings.compensation === 'manual'
				? itemValueReader(context, items, 'compensationPlan')
				: undefined,
		precondition: settings.preconditionHeader
			? itemValueReader(context, items, 'preconditionValue')
			: undefined,
	};

	/** The expected version as its header carries it; a time for If-Unmodified-Since as an HTTP date. */
	const preconditionOf = (index: number): WriteRequest['precondition'] => {
		if (!settings.preconditionHeader || !read.precondition) return undefined;
		const raw = read.precondition(index);
		let value = raw instanceof Date ? raw.toUTCString() : text(raw);
		if (!value)
			throw new ItemError(
				`Item ${index} has no expected version for its ${settings.preconditionHeader} precondition`,
				index,
				'Map Expected Version to the ETag or version the write was built on; nothing was sent.',
			);
		if (settings.preconditionHeader === 'If-Unmodified-Since' && !/GMT$/.test(value)) {
			const time = new Date(value);
			if (Number.isNaN(time.getTime()))
				throw new ItemError(
					`Item ${index}: the expected last-modified time ${JSON.stringify(value)} is not a date`,
					index,
					'Map Expected Version to the last-modified time the write was built on.',
				);
			value = time.toUTCString();
		}
		if (/[\u0000-\u001f\u007f]/.test(value) || !/^[\t\u0020-\u00ff]*$/.test(value))
			throw new ItemError(
				`Item ${index}: the expected version cannot travel in an HTTP header`,
				index,
				'Map Expected Version to plain text (letters, digits, quotes, punctuation).',
			);
		return { header: settings.preconditionHeader, value };
	};

	const keyOf = (index: number): string => {
		let key: string;
		if (read.keyMode(index) === 'custom') {
			const raw = read.customKey(index);
			if (raw !== null && typeof raw === 'object') {
				throw new ItemError(
					`Item ${index}: the idempotency key is ${Array.isArray(raw) ? 'a list' : 'an object'}, not text`,
					index,
					'Map Key to text or a number that identifies the business operation. Nothing was sent.',
				);
			}
			key = text(raw);
			if (!key)
				throw new ItemError(
					`Item ${index} has no idempotency key`,
					index,
					'Key evaluated to empty. Map it to the business identity of the write (for example the invoice number and the action); nothing was sent.',
				);
		} else {
			const parts = {
				source: text(read.source(index)),
				recordId: text(read.recordId(index)),
				action: text(read.action(index)),
				version: text(read.version(index)),
			};
			const missing = (Object.keys(parts) as Array<keyof typeof parts>)
				.filter((part) => !parts[part])
				.map((part) => KEY_PARTS[part]);
			if (missing.length > 0)
				throw new ItemError(
					`Item ${index} has no idempotency key: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} empty`,
					index,
					'The key is built from source, record ID, action and version; every part must have a value. Nothing was sent.',
				);
			key = businessKey(parts);
		}
		const checked = checkedKey(key, settings.sendKey);
		if ('problem' in checked) {
			throw new ItemError(
				`Item ${index}: ${checked.problem}`,
				index,
				'Fix the Key expression; nothing was claimed or sent.',
			);
		}
		return checked.key;
	};

	const bodyOf = (index: number, headers: IDataObject, options: IHttpRequestOptions): unknown => {
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
	};

	/** How this item's step is reversed, as kept with its record. */
	const compensationOf = (index: number): Compensation | undefined => {
		if (settings.compensation === 'none') return undefined;
		if (settings.compensation !== 'manual') return settings.compensation;
		const plan = text(read.plan?.(index));
		if (!plan)
			throw new ItemError(
				`Item ${index} has no repair plan`,
				index,
				'Set Repair Plan to what a person does to reverse this step; nothing was sent.',
			);
		return { kind: 'manual', plan };
	};

	/** One item's request, or an ItemError saying what to fix. */
	return (index: number): PreparedRequest => {
		const url = text(read.url(index));
		if (!/^https?:\/\/[^\s]+$/i.test(url))
			throw new ItemError(
				`Item ${index} has no usable URL (got ${JSON.stringify(url.slice(0, 200))})`,
				index,
				'Set URL to an http:// or https:// address.',
			);
		const key = keyOf(index);
		const timeout = inRange(read.timeout(index), LIMITS.timeoutMs, index);
		const headers: IDataObject = {};
		const qs: IDataObject = {};
		if (context.getNodeParameter('sendQuery', index, false))
			for (const p of pairs(context.getNodeParameter('queryParameters', index, {})))
				qs[p.name] = p.value;
		if (context.getNodeParameter('sendHeaders', index, false))
			for (const p of pairs(context.getNodeParameter('headerParameters', index, {})))
				headers[p.name] = p.value;
		const options: IHttpRequestOptions = {
			method,
			url,
			qs,
			headers,
			timeout,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
		};
		const body = bodyOf(index, headers, options);
		// The fingerprint is taken before credentials are added: they are not part of the request's identity.
		const fingerprint = requestFingerprint({ method, url, query: { ...qs }, body });
		if (settings.sendKey) headers[settings.headerName] = headerValue(key, settings.quoting);
		const precondition = preconditionOf(index);
		if (precondition) headers[precondition.header] = precondition.value;
		if (credentials && authentication === 'httpHeaderAuth')
			headers[String(credentials.name)] = credentials.value;
		if (credentials && authentication === 'httpBearerAuth')
			headers.Authorization = `Bearer ${String(credentials.token)}`;
		if (credentials && authentication === 'httpBasicAuth')
			options.auth = { username: String(credentials.user), password: String(credentials.password) };
		if (credentials && authentication === 'httpQueryAuth')
			qs[String(credentials.name)] = credentials.value;
		return {
			index,
			scope: settings.scope,
			key,
			fingerprint,
			timeoutMs: timeout,
			precondition,
			payload: items[index].json,
			options,
			lookupUrl: read.lookupUrl ? text(read.lookupUrl(index)) || undefined : undefined,
			itemRef: text((read.itemReference(index) as IDataObject)?.itemReference) || undefined,
			compensation: compensationOf(index),
		};
	};
}
