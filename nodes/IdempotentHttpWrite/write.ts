import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import {
	businessKey,
	DEFAULT_POLICY,
	headerValue,
	type HttpAnswer,
	ItemError,
	type LookupResult,
	NOT_SENT_CODES,
	requestFingerprint,
	type RetryPolicy,
	runWrites,
	type SendResult,
	type UnknownOutcomeStrategy,
	type WriteRequest,
} from '../../lib';
import { itemValueReader } from '../shared/itemValues';
import { storeFor, toNodeError } from '../shared/store';

interface PreparedRequest extends WriteRequest {
	options: IHttpRequestOptions;
	lookupUrl?: string;
}

const statusList = (text: unknown, fallback: number[]): number[] => {
	const list = String(text ?? '')
		.split(',')
		.map((s) => Number(s.trim()))
		.filter((n) => Number.isInteger(n) && n >= 100 && n < 600);
	return list.length > 0 ? list : fallback;
};

const pairs = (value: unknown): Array<{ name: string; value: string }> =>
	((value as { parameter?: Array<{ name: string; value: string }> })?.parameter ?? []).filter(
		(p) => p.name,
	);

/** Error codes of n8n's HTTP helpers (axios), wherever the wrapper put them. */
const errorCode = (error: unknown): string => {
	const e = error as { code?: unknown; cause?: { code?: unknown }; context?: { code?: unknown } };
	return String(e?.code ?? e?.cause?.code ?? e?.context?.code ?? 'ERROR');
};

export async function write(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const node = this.getNode();
	if (node.retryOnFail) {
		this.addExecutionHints({
			message:
				"Turn off this node's Retry On Fail (Settings): it retries the whole run on top of this node's own retries, and retries multiply.",
			type: 'warning',
			location: 'outputPane',
		});
	}

	const idempotency = this.getNodeParameter('idempotency', 0, {}) as IDataObject;
	const retries = this.getNodeParameter('retries', 0, {}) as IDataObject;
	const sendKey = idempotency.sendKey !== false;
	const headerName = String(idempotency.headerName || 'Idempotency-Key');
	const quoting = idempotency.quoting === 'quoted' ? 'quoted' : 'plain';
	const integration = String(this.getNodeParameter('integration', 0, '') ?? '').trim() || undefined;
	const workflow = this.getWorkflow();
	const scope =
		String(idempotency.scope ?? '').trim() ||
		integration ||
		`${workflow.id ?? 'unsaved'}:${node.name}`;
	const onUnknownChoice = this.getNodeParameter('onUnknown', 0, 'auto') as string;
	const onUnknown: UnknownOutcomeStrategy =
		onUnknownChoice === 'auto'
			? sendKey
				? 'retry'
				: 'park'
			: (onUnknownChoice as UnknownOutcomeStrategy);
	const onFailure = this.getNodeParameter('onFailure', 0, 'parkAndRoute') as string;
	const parkOptions =
		onFailure === 'route' ? {} : (this.getNodeParameter('parkOptions', 0, {}) as IDataObject);
	const authentication = this.getNodeParameter('authentication', 0, 'none') as string;
	const credentials =
		authentication === 'none' || authentication === 'oAuth2Api'
			? undefined
			: ((await this.getCredentials(authentication)) as IDataObject);

	const policy: RetryPolicy = {
		maxAttempts: Number(retries.maxAttempts ?? DEFAULT_POLICY.maxAttempts),
		baseDelayMs: Number(retries.baseDelaySeconds ?? 2) * 1000,
		maxDelayMs: Number(retries.maxDelaySeconds ?? 60) * 1000,
		deadlineMs: Number(retries.deadlineSeconds ?? 120) * 1000,
		retryOn: statusList(retries.retryOn, DEFAULT_POLICY.retryOn),
		neverRetry: statusList(retries.neverRetry, DEFAULT_POLICY.neverRetry),
		honourRetryAfter: retries.honourRetryAfter !== false,
	};

	// Every item's request and key first: a bad item stops the run before anything is claimed or sent.
	const method = this.getNodeParameter('method', 0, 'POST') as IHttpRequestMethods;
	const read = {
		url: itemValueReader(this, items, 'url'),
		keyMode: itemValueReader(this, items, 'keyMode', 'business'),
		source: itemValueReader(this, items, 'keySource'),
		recordId: itemValueReader(this, items, 'keyRecordId'),
		action: itemValueReader(this, items, 'keyAction'),
		version: itemValueReader(this, items, 'keyVersion'),
		customKey: itemValueReader(this, items, 'customKey'),
		sendBody: itemValueReader(this, items, 'sendBody', true),
		contentType: itemValueReader(this, items, 'contentType', 'json'),
		jsonBody: itemValueReader(this, items, 'jsonBody', '{}'),
		timeout: itemValueReader(this, items, 'timeout', 10_000),
		lookupUrl: onUnknown === 'lookup' ? itemValueReader(this, items, 'lookupUrl') : undefined,
	};
	const text = (value: unknown): string =>
		value === undefined || value === null ? '' : String(value).trim();
	const prepared: PreparedRequest[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const url = text(read.url(index));
			if (!/^https?:\/\//i.test(url))
				throw new ItemError(
					`Item ${index} has no usable URL (got ${JSON.stringify(url)})`,
					index,
					'Set URL to an http:// or https:// address.',
				);
			let key: string;
			if (read.keyMode(index) === 'custom') {
				key = text(read.customKey(index));
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
				const missing = Object.entries(parts)
					.filter(([, v]) => !v)
					.map(
						([k]) =>
							({
								source: 'Source System',
								recordId: 'Record ID',
								action: 'Action',
								version: 'Record Version',
							})[k],
					);
				if (missing.length > 0)
					throw new ItemError(
						`Item ${index} has no idempotency key: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} empty`,
						index,
						'The key is built from source, record ID, action and version; every part must have a value. Nothing was sent.',
					);
				key = businessKey(parts);
			}
			const headers: IDataObject = {};
			const qs: IDataObject = {};
			if (this.getNodeParameter('sendQuery', index, false))
				for (const p of pairs(this.getNodeParameter('queryParameters', index, {})))
					qs[p.name] = p.value;
			if (this.getNodeParameter('sendHeaders', index, false))
				for (const p of pairs(this.getNodeParameter('headerParameters', index, {})))
					headers[p.name] = p.value;
			let body: unknown;
			const options: IHttpRequestOptions = {
				method,
				url,
				qs,
				headers,
				timeout: Number(read.timeout(index)),
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
			};
			if (read.sendBody(index) !== false && method !== 'DELETE') {
				const type = read.contentType(index);
				if (type === 'form-urlencoded') {
					const form = Object.fromEntries(
						pairs(this.getNodeParameter('bodyParameters', index, {})).map((p) => [p.name, p.value]),
					);
					body = form;
					options.body = new URLSearchParams(form).toString();
					headers['content-type'] = 'application/x-www-form-urlencoded';
				} else if (type === 'raw') {
					body = String(this.getNodeParameter('rawBody', index, ''));
					options.body = body as string;
					headers['content-type'] = String(
						this.getNodeParameter('rawContentType', index, 'text/plain'),
					);
				} else {
					const raw = read.jsonBody(index);
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
					} else body = raw;
					options.body = body as IDataObject;
					options.json = true;
				}
			}
			if (sendKey) headers[headerName] = headerValue(key, quoting);
			if (credentials && authentication === 'httpHeaderAuth')
				headers[String(credentials.name)] = credentials.value;
			if (credentials && authentication === 'httpBearerAuth')
				headers.Authorization = `Bearer ${String(credentials.token)}`;
			if (credentials && authentication === 'httpBasicAuth')
				options.auth = {
					username: String(credentials.user),
					password: String(credentials.password),
				};
			if (credentials && authentication === 'httpQueryAuth')
				qs[String(credentials.name)] = credentials.value;
			prepared.push({
				index,
				scope,
				key,
				fingerprint: requestFingerprint({ method, url, body }),
				payload: items[index].json,
				options,
				lookupUrl: read.lookupUrl ? text(read.lookupUrl(index)) || undefined : undefined,
			});
		} catch (error) {
			throw toNodeError(this, error, index);
		}
	}

	const call = async (options: IHttpRequestOptions): Promise<HttpAnswer> => {
		const response = (
			authentication === 'oAuth2Api'
				? await this.helpers.httpRequestWithAuthentication.call(this, 'oAuth2Api', options)
				: await this.helpers.httpRequest(options)
		) as { statusCode: number; headers: Record<string, string>; body: unknown };
		return { status: response.statusCode, headers: response.headers ?? {}, body: response.body };
	};

	const store = await storeFor(this);
	const byIndex = new Map(prepared.map((p) => [p.index, p]));
	const executionId = this.getExecutionId();
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	const runLink = workflow.id
		? `${baseUrl}/workflow/${workflow.id}/executions/${executionId}`
		: null;
	const outcomes = await runWrites(
		store,
		{
			workflowId: workflow.id,
			workflowName: workflow.name,
			executionId,
			node: node.name,
			runLink: runLink ?? undefined,
			integration,
			retentionDays: Number(idempotency.retentionDays ?? 30),
			policy,
			onUnknown,
			concurrency: Math.max(1, Number(retries.concurrency ?? 5)),
			maxSavedBodyChars: Number(idempotency.maxSavedBodyKb ?? 64) * 1024,
			park: onFailure !== 'route',
			owner: text(parkOptions.owner) || undefined,
			impact: text(parkOptions.impact) || undefined,
			alreadyHappened: text(parkOptions.alreadyHappened) || undefined,
			breaker:
				Number(retries.breakerThreshold ?? 0) > 0
					? {
							threshold: Number(retries.breakerThreshold),
							coolDownSeconds: Number(retries.breakerCoolDownSeconds ?? 60),
						}
					: undefined,
		},
		prepared,
		{
			send: async (request): Promise<SendResult> => {
				try {
					return { kind: 'response', answer: await call(byIndex.get(request.index)!.options) };
				} catch (error) {
					const code = errorCode(error);
					return {
						kind: NOT_SENT_CODES.has(code) ? 'not_sent' : 'lost',
						code,
						message: error instanceof Error ? error.message : String(error),
					};
				}
			},
			lookup: async (request): Promise<LookupResult> => {
				const url = byIndex.get(request.index)!.lookupUrl;
				if (!url) return { kind: 'conflict', message: 'no Lookup URL is set for this item' };
				const answer = await call({
					...byIndex.get(request.index)!.options,
					method: 'GET',
					url,
					body: undefined,
					json: true,
				});
				if (answer.status >= 200 && answer.status < 300) return { kind: 'exists', answer };
				if (answer.status === 404) return { kind: 'absent' };
				return { kind: 'conflict', message: `lookup answered ${answer.status}` };
			},
		},
	).catch((error: unknown) => {
		throw toNodeError(this, error);
	});

	const responseFormat = this.getNodeParameter('responseFormat', 0, 'body') as string;
	const success: INodeExecutionData[] = [];
	const failed: INodeExecutionData[] = [];
	for (const outcome of outcomes) {
		const reliability = {
			key: outcome.key,
			replayed: outcome.replayed,
			attempts: outcome.attempts,
			durationMs: outcome.durationMs,
		};
		if (outcome.ok) {
			const answer = outcome.answer!;
			const body =
				answer.body !== null && typeof answer.body === 'object' && !Array.isArray(answer.body)
					? (answer.body as IDataObject)
					: { data: answer.body as IDataObject };
			const json =
				responseFormat === 'full'
					? {
							statusCode: answer.status,
							headers: answer.headers as IDataObject,
							body: answer.body as IDataObject,
						}
					: responseFormat === 'inputAndResponse'
						? { ...items[outcome.index].json, response: answer.body as IDataObject }
						: body;
			success.push({
				json: { ...json, _reliability: reliability },
				pairedItem: { item: outcome.index },
			});
		} else {
			const f = outcome.failure!;
			failed.push({
				// Everything an alert needs, so a Failed output can feed the Alert workflow directly.
				json: {
					class: f.class,
					status: f.status ?? null,
					message: f.message,
					attempts: outcome.attempts,
					key: outcome.key,
					deadLetterId: f.deadLetterId ?? null,
					retryAt: f.retryAt?.toISOString() ?? null,
					step: node.name,
					workflowId: workflow.id ?? null,
					workflowName: workflow.name ?? null,
					runLink,
					integration: integration ?? null,
					impact: text(parkOptions.impact) || null,
					alreadyHappened: text(parkOptions.alreadyHappened) || null,
					owner: text(parkOptions.owner) || null,
				},
				pairedItem: { item: outcome.index },
			});
		}
	}
	if (onFailure === 'parkAndFail' && failed.length > 0) {
		const first = failed[0].json;
		throw new NodeOperationError(
			node,
			`${failed.length} of ${items.length} writes failed; first: ${String(first.message)}`,
			{
				itemIndex: (failed[0].pairedItem as { item: number }).item,
				description: `Parked in the dead-letter store (record ${String(first.deadLetterId)}, class ${String(first.class)}). Fix the cause, then replay: the same key makes the replay safe.`,
			},
		);
	}
	return [success, failed];
}
