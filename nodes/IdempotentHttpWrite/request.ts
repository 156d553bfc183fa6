import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';
import {
	checkLength,
	type Compensation,
	inRange,
	LIMITS,
	headerValue,
	ItemError,
	requestFingerprint,
	TEXT_LIMITS,
	type WriteRequest,
} from '../../lib';
import { itemValueReader, trimmedText } from '../shared/itemValues';
import { encodeBody, pairs } from './requestBody';
import { addCredentials, credentialsFor, preconditionOf } from './requestHeaders';
import { idempotencyKeyOf } from './requestKey';
import type { WriteSettings } from './settings';

/**
 * Request building: each item's URL, key, query, headers, body and authentication, as n8n's
 * HTTP helpers take them. A bad item gets an ItemError that names it and says what to fix.
 */
export interface PreparedRequest extends WriteRequest {
	options: IHttpRequestOptions;
	lookupUrl?: string;
}

export async function requestBuilder(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	settings: WriteSettings,
) {
	const { authentication } = settings;
	const credentials = await credentialsFor(context, authentication);
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

	/** How this item's step is reversed, as kept with its record. */
	const compensationOf = (index: number): Compensation | undefined => {
		if (settings.compensation === 'none') return undefined;
		if (settings.compensation !== 'manual') return settings.compensation;
		const plan = trimmedText(read.plan?.(index));
		if (!plan)
			throw new ItemError(
				`Item ${index} has no repair plan`,
				index,
				'Set Repair Plan to what a person does to reverse this step; nothing was sent.',
			);
		return { kind: 'manual', plan };
	};

	/** The business item this write is a step of, checked: it is stored in an indexed column. */
	const itemRefOf = (index: number): string | undefined => {
		const ref = trimmedText((read.itemReference(index) as IDataObject)?.itemReference) || undefined;
		checkLength(
			ref,
			TEXT_LIMITS.itemReference,
			index,
			'a business ID such as the order number is enough. Nothing was claimed or sent.',
		);
		return ref;
	};

	/** One item's request, or an ItemError saying what to fix. */
	return (index: number): PreparedRequest => {
		const url = trimmedText(read.url(index));
		if (!/^https?:\/\/[^\s]+$/i.test(url))
			throw new ItemError(
				`Item ${index} has no usable URL (got ${JSON.stringify(url.slice(0, 200))})`,
				index,
				'Set URL to an http:// or https:// address.',
			);
		const key = idempotencyKeyOf(read, settings.sendKey, index);
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
		const body = encodeBody(context, read, method, index, headers, options);
		// The fingerprint is taken before credentials are added: they are not part of the request's identity.
		const fingerprint = requestFingerprint({ method, url, query: { ...qs }, body });
		if (settings.sendKey) headers[settings.headerName] = headerValue(key, settings.quoting);
		const precondition = preconditionOf(settings, read.precondition, index);
		if (precondition) headers[precondition.header] = precondition.value;
		addCredentials(credentials, authentication, { headers, qs, options });
		const itemRef = itemRefOf(index);
		return {
			index,
			scope: settings.scope,
			key,
			fingerprint,
			timeoutMs: timeout,
			precondition,
			payload: items[index].json,
			options,
			lookupUrl: read.lookupUrl ? trimmedText(read.lookupUrl(index)) || undefined : undefined,
			itemRef,
			// What Trace finds the item by when its key is a hash of its business identity.
			businessId:
				itemRef ??
				(read.keyMode(index) === 'custom'
					? undefined
					: trimmedText(read.recordId(index)) || undefined),
			compensation: compensationOf(index),
		};
	};
}
