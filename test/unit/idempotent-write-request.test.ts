import { createHash } from 'node:crypto';
import {
	ExpressionError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import { IdempotentHttpWrite } from '../../nodes/IdempotentHttpWrite/IdempotentHttpWrite.node';
import { requestBuilder } from '../../nodes/IdempotentHttpWrite/request';
import { readSettings } from '../../nodes/IdempotentHttpWrite/settings';
import { transport } from '../../nodes/IdempotentHttpWrite/transport';
import { executeFunctions } from '../helpers/executeFunctions';

/**
 * Idempotent HTTP Write's node layer with a stand-in for n8n's IExecuteFunctions, as n8n's own
 * node tests do: what the node makes of its parameters and items (the key, the body, the
 * credentials) before anything is claimed or sent. The real-n8n tests cover the same path end to
 * end; these pin down each rule on its own.
 */

type Parameters = Record<string, unknown>;

/** A `={{ $json.a.b }}` parameter, as the editor stores one. */
const fromItem = (path: string): string => `={{ $json.${path} }}`;

function context(
	parameters: Parameters,
	options: { credentials?: Record<string, IDataObject>; helpers?: Partial<IDataObject> } = {},
): IExecuteFunctions {
	return executeFunctions({
		name: 'Create Invoice',
		type: 'n8n-nodes-reliability.idempotentHttpWrite',
		parameters,
		workflow: { id: 'wf-billing', name: 'Billing' },
		credentials: (type) => options.credentials?.[type],
		helpers: options.helpers,
	});
}

const invoice = (id: string, extra: IDataObject = {}): INodeExecutionData => ({
	json: { id, version: 3, amount: 120, ...extra },
});

/** The parameters of a typical write: a POST of the item, keyed by its business identity. */
const base: Parameters = {
	method: 'POST',
	url: 'https://billing.example.com/invoices',
	keySource: 'crm',
	keyRecordId: fromItem('id'),
	keyAction: 'create-invoice',
	keyVersion: fromItem('version'),
	jsonBody: '{"amount": 120, "currency": "EUR"}',
};

async function build(parameters: Parameters, items: INodeExecutionData[], credentials = {}) {
	const ctx = context(parameters, { credentials });
	const settings = readSettings(ctx);
	const requestOf = await requestBuilder(ctx, items, settings);
	return { ctx, settings, requestOf };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the idempotency key', () => {
	it('is the hash of source, record, action and version, the same on every retry of the item', async () => {
		const items = [invoice('inv-1'), invoice('inv-1', { retriedAt: 'later' }), invoice('inv-2')];
		const { requestOf } = await build(base, items);
		const [first, retry, other] = items.map((_, index) => requestOf(index));
		expect(first.key).toBe(sha256('crm:inv-1:create-invoice:3').slice(0, 48));
		expect(retry.key).toBe(first.key);
		expect(other.key).not.toBe(first.key);
	});

	it('hashed from the business identity, keeps its record ID beside it for Trace; an Item Reference wins', async () => {
		const { requestOf } = await build(base, [invoice('inv-1')]);
		expect(requestOf(0).businessId).toBe('inv-1');
		const referenced = await build({ ...base, idempotency: { itemReference: 'order-77' } }, [
			invoice('inv-1'),
		]);
		expect(referenced.requestOf(0).businessId).toBe('order-77');
		const custom = await build({ ...base, keyMode: 'custom', customKey: 'inv-1:post' }, [
			invoice('inv-1'),
		]);
		expect(custom.requestOf(0).businessId).toBeUndefined();
	});

	it('travels plain in the Idempotency-Key header by default', async () => {
		const { requestOf } = await build(base, [invoice('inv-1')]);
		const request = requestOf(0);
		expect(request.options.headers).toMatchObject({ 'Idempotency-Key': request.key });
	});

	it('travels quoted, under the header name the target asks for, when so set', async () => {
		const { requestOf } = await build(
			{
				...base,
				keyMode: 'custom',
				customKey: 'order "42"',
				idempotency: { headerName: 'X-Request-Key', quoting: 'quoted' },
			},
			[invoice('inv-1')],
		);
		const headers = requestOf(0).options.headers as IDataObject;
		expect(headers['X-Request-Key']).toBe('"order \\"42\\""');
		expect(headers['Idempotency-Key']).toBeUndefined();
	});

	it('is not sent when Send Key is off, and may then hold what a header cannot carry', async () => {
		const { requestOf } = await build(
			{ ...base, keyMode: 'custom', customKey: 'invoice-7-€', idempotency: { sendKey: false } },
			[invoice('inv-1')],
		);
		const request = requestOf(0);
		expect(request.key).toBe('invoice-7-€');
		expect(request.options.headers).toEqual({});
	});

	it('is refused, naming the item, when a header cannot carry it', async () => {
		const { requestOf } = await build({ ...base, keyMode: 'custom', customKey: 'invoice-7-€' }, [
			invoice('inv-1'),
		]);
		expect(() => requestOf(0)).toThrow(
			expect.objectContaining({ itemIndex: 0, message: expect.stringContaining('"€"') }),
		);
	});

	it('names the empty parts of the business identity instead of writing without a key', async () => {
		const { requestOf } = await build({ ...base, keyAction: '' }, [
			invoice('inv-1'),
			invoice('', { version: null }),
		]);
		expect(() => requestOf(0)).toThrow('Item 0 has no idempotency key: Action is empty');
		expect(() => requestOf(1)).toThrow(
			'Item 1 has no idempotency key: Record ID, Action, Record Version are empty',
		);
	});

	it('refuses an empty or structured custom key, naming the item', async () => {
		const items = [invoice('inv-1'), invoice('inv-2', { key: { nested: true } })];
		const { requestOf } = await build(
			{ ...base, keyMode: 'custom', customKey: fromItem('key') },
			items,
		);
		expect(() => requestOf(0)).toThrow(
			expect.objectContaining({ itemIndex: 0, message: 'Item 0 has no idempotency key' }),
		);
		expect(() => requestOf(1)).toThrow('Item 1: the idempotency key is an object, not text');
	});

	it('longer than 255 characters is stored and sent as its hash', async () => {
		const long = 'k'.repeat(300);
		const { requestOf } = await build({ ...base, keyMode: 'custom', customKey: long }, [
			invoice('inv-1'),
		]);
		expect(requestOf(0).key).toBe(`sha256:${sha256(long)}`);
	});

	it("is unique per scope: the integration by default, else this workflow and the node's ID", async () => {
		expect((await build({ ...base, integration: 'billing' }, [])).settings.scope).toBe('billing');
		expect((await build(base, [])).settings.scope).toBe('wf-billing:n1');
	});
});

describe('the body', () => {
	it('is JSON by default, parsed from the JSON field and sent as JSON', async () => {
		const { requestOf } = await build(base, [invoice('inv-1')]);
		const { options } = requestOf(0);
		expect(options.body).toEqual({ amount: 120, currency: 'EUR' });
		expect(options.json).toBe(true);
	});

	it('an empty JSON field is an empty object', async () => {
		const { requestOf } = await build({ ...base, jsonBody: '  ' }, [invoice('inv-1')]);
		expect(requestOf(0).options.body).toEqual({});
	});

	it("is by default a Webhook item's body, never its headers", async () => {
		const jsonBody = new IdempotentHttpWrite().description.properties.find(
			(p) => p.name === 'jsonBody',
		)!.default;
		const webhookItem = {
			json: {
				headers: { authorization: 'Bearer caller-secret' },
				query: {},
				body: { id: 'inv-1', version: 3, amount: 120 },
			},
		};
		const { requestOf } = await build(
			{ ...base, jsonBody, keyRecordId: fromItem('body.id'), keyVersion: fromItem('body.version') },
			[webhookItem],
		);
		expect(requestOf(0).options.body).toEqual({ id: 'inv-1', version: 3, amount: 120 });
	});

	it('whose expression gives nothing fails its item, saying what to set', async () => {
		const { requestOf } = await build({ ...base, jsonBody: fromItem('body') }, [invoice('inv-1')]);
		expect(() => requestOf(0)).toThrow(
			expect.objectContaining({
				itemIndex: 0,
				message: 'Item 0: the JSON body is empty (its expression gave nothing)',
				hint: expect.stringContaining('{{ $json.body }}'),
			}),
		);
	});

	it('of invalid JSON fails its item before anything is sent', async () => {
		const { requestOf } = await build({ ...base, jsonBody: '{"amount": 120,' }, [invoice('inv-1')]);
		expect(() => requestOf(0)).toThrow(
			expect.objectContaining({
				itemIndex: 0,
				message: 'Item 0: the JSON body is not valid JSON',
				hint: 'Fix the JSON field; nothing was sent.',
			}),
		);
	});

	it('with the same fields in another order is the same request (same fingerprint)', async () => {
		const one = await build(base, [invoice('inv-1')]);
		const other = await build({ ...base, jsonBody: '{"currency": "EUR", "amount": 120}' }, [
			invoice('inv-1'),
		]);
		expect(other.requestOf(0).fingerprint).toBe(one.requestOf(0).fingerprint);
		const changed = await build({ ...base, jsonBody: '{"currency": "EUR", "amount": 121}' }, [
			invoice('inv-1'),
		]);
		expect(changed.requestOf(0).fingerprint).not.toBe(one.requestOf(0).fingerprint);
	});

	it('as a form is URL-encoded, with its content type', async () => {
		const { requestOf } = await build(
			{
				...base,
				contentType: 'form-urlencoded',
				bodyParameters: {
					parameter: [
						{ name: 'amount', value: '120' },
						{ name: 'note', value: 'a&b c' },
						{ name: '', value: 'dropped' },
					],
				},
			},
			[invoice('inv-1')],
		);
		const { options } = requestOf(0);
		expect(options.body).toBe('amount=120&note=a%26b+c');
		expect(options.headers).toMatchObject({ 'content-type': 'application/x-www-form-urlencoded' });
		expect(options.json).toBeUndefined();
	});

	it('raw is sent as written, with the content type given', async () => {
		const { requestOf } = await build(
			{
				...base,
				contentType: 'raw',
				rawBody: '<invoice id="1"/>',
				rawContentType: 'application/xml',
			},
			[invoice('inv-1')],
		);
		const { options } = requestOf(0);
		expect(options.body).toBe('<invoice id="1"/>');
		expect(options.headers).toMatchObject({ 'content-type': 'application/xml' });
	});

	it('is not sent with a DELETE, nor when Send Body is off', async () => {
		const deleted = await build({ ...base, method: 'DELETE' }, [invoice('inv-1')]);
		expect(deleted.requestOf(0).options.body).toBeUndefined();
		const bodiless = await build({ ...base, sendBody: false }, [invoice('inv-1')]);
		expect(bodiless.requestOf(0).options.body).toBeUndefined();
	});
});

describe('authentication', () => {
	it('a header credential adds its header', async () => {
		const { ctx, requestOf } = await build(
			{ ...base, authentication: 'httpHeaderAuth' },
			[invoice('inv-1')],
			{ httpHeaderAuth: { name: 'X-Api-Key', value: 'secret-1' } },
		);
		expect(requestOf(0).options.headers).toMatchObject({ 'X-Api-Key': 'secret-1' });
		expect(ctx.getCredentials).toHaveBeenCalledWith('httpHeaderAuth');
	});

	it('a bearer credential adds an Authorization header', async () => {
		const { requestOf } = await build(
			{ ...base, authentication: 'httpBearerAuth' },
			[invoice('inv-1')],
			{ httpBearerAuth: { token: 'tok-1' } },
		);
		expect(requestOf(0).options.headers).toMatchObject({ Authorization: 'Bearer tok-1' });
	});

	it('a basic credential becomes the request auth, not a header of its own', async () => {
		const { requestOf } = await build(
			{ ...base, authentication: 'httpBasicAuth' },
			[invoice('inv-1')],
			{ httpBasicAuth: { user: 'ana', password: 'pw' } },
		);
		const { options } = requestOf(0);
		expect(options.auth).toEqual({ username: 'ana', password: 'pw' });
		expect(options.headers).not.toHaveProperty('Authorization');
	});

	it('a query credential adds its query parameter', async () => {
		const { requestOf } = await build(
			{ ...base, authentication: 'httpQueryAuth' },
			[invoice('inv-1')],
			{ httpQueryAuth: { name: 'api_key', value: 'secret-2' } },
		);
		expect(requestOf(0).options.qs).toEqual({ api_key: 'secret-2' });
	});

	it('is not part of the request identity: the fingerprint is the same with or without it', async () => {
		const anonymous = await build(base, [invoice('inv-1')]);
		const signed = await build({ ...base, authentication: 'httpQueryAuth' }, [invoice('inv-1')], {
			httpQueryAuth: { name: 'api_key', value: 'secret-2' },
		});
		expect(signed.requestOf(0).fingerprint).toBe(anonymous.requestOf(0).fingerprint);
	});

	it('OAuth2 is left to n8n: no credential is read here, and the call goes through n8n', async () => {
		const httpRequestWithAuthentication = jest.fn(async () => ({
			statusCode: 201,
			headers: { 'content-type': 'application/json' },
			body: { id: 'in_1' },
		}));
		const httpRequest = jest.fn();
		const ctx = context(
			{ ...base, authentication: 'oAuth2Api' },
			{ helpers: { httpRequestWithAuthentication, httpRequest } },
		);
		const settings = readSettings(ctx);
		const request = (await requestBuilder(ctx, [invoice('inv-1')], settings))(0);
		expect(ctx.getCredentials).not.toHaveBeenCalled();

		const { send } = transport(ctx, settings.authentication, new Map([[0, request]]));
		const sent = await send(request, 1, { notAfter: Date.now() + 60_000 });
		expect(sent).toEqual({
			kind: 'response',
			answer: {
				status: 201,
				headers: { 'content-type': 'application/json' },
				body: { id: 'in_1' },
			},
		});
		expect(httpRequestWithAuthentication).toHaveBeenCalledWith('oAuth2Api', {
			...request.options,
			abortSignal: expect.any(AbortSignal),
		});
		expect(httpRequest).not.toHaveBeenCalled();
	});
});

describe('the transport', () => {
	const sendWith = async (failure: unknown) => {
		const httpRequest = jest.fn(async () => {
			throw failure;
		});
		const ctx = context(base, { helpers: { httpRequest } });
		const request = (await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx)))(0);
		return await transport(ctx, 'none', new Map([[0, request]])).send(request, 1, {
			notAfter: Date.now() + 60_000,
		});
	};

	it('a refused connection was never sent: safe to send again', async () => {
		const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
		expect(await sendWith(refused)).toEqual({
			kind: 'not_sent',
			code: 'ECONNREFUSED',
			message: 'connect ECONNREFUSED',
		});
	});

	it('a connection reset after sending is lost: the effect may exist', async () => {
		const reset = Object.assign(new Error('socket hang up'), { cause: { code: 'ECONNRESET' } });
		expect(await sendWith(reset)).toMatchObject({ kind: 'lost', code: 'ECONNRESET' });
	});

	it('sends nothing once the lease that covers the attempt has ended (the run stalled)', async () => {
		const httpRequest = jest.fn();
		const ctx = context(base, { helpers: { httpRequest } });
		const request = (await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx)))(0);
		const sent = await transport(ctx, 'none', new Map([[0, request]])).send(request, 1, {
			notAfter: Date.now() - 1,
		});
		expect(sent).toMatchObject({ kind: 'not_sent', code: 'ELEASEENDED' });
		expect(httpRequest).not.toHaveBeenCalled();
	});

	it('abandons a request still in flight when the lease ends: lost, its effect may exist', async () => {
		// n8n's helper ends a request when its abort signal fires, as axios does.
		const httpRequest = jest.fn(
			async (options: { abortSignal?: AbortSignal }) =>
				await new Promise((_resolve, reject) =>
					options.abortSignal?.addEventListener('abort', () =>
						reject(Object.assign(new Error('canceled'), { code: 'ERR_CANCELED' })),
					),
				),
		);
		const ctx = context(base, { helpers: { httpRequest } });
		const request = (await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx)))(0);
		const started = Date.now();
		const sent = await transport(ctx, 'none', new Map([[0, request]])).send(request, 1, {
			notAfter: started + 50,
		});
		expect(sent).toMatchObject({ kind: 'lost', code: 'ERR_CANCELED' });
		expect(Date.now() - started).toBeLessThan(5_000);
	});
});

describe('the compensation of a step', () => {
	it('keeps a request template as written, placeholders unfilled, even in an expression', async () => {
		const ctx = context({
			...base,
			compensation: 'request',
			compensationMethod: 'DELETE',
			compensationUrl: '=https://billing.example.com/invoices/{{ $json.id }}',
			compensationBody: '{"reason": "{{ $json.status }}"}',
			idempotency: { itemReference: 'order-9' },
		});
		const request = (await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx)))(0);
		expect(request.compensation).toEqual({
			kind: 'request',
			method: 'DELETE',
			url: 'https://billing.example.com/invoices/{{ $json.id }}',
			body: '{"reason": "{{ $json.status }}"}',
		});
		expect(request.itemRef).toBe('order-9');
	});

	it('an Item Reference longer than 255 characters fails its item, named, before anything is sent', async () => {
		const ctx = context({ ...base, idempotency: { itemReference: 'r'.repeat(256) } });
		const build = await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx));
		expect(() => build(0)).toThrow(
			expect.objectContaining({
				itemIndex: 0,
				message: 'Item 0: Item Reference is 256 characters long, more than the 255 it may have',
			}),
		);
	});

	it('a manual plan is read per item, and an empty one names the item', async () => {
		const ctx = context({ ...base, compensation: 'manual', compensationPlan: 'refund by hand' });
		const build = await requestBuilder(ctx, [invoice('inv-1')], readSettings(ctx));
		expect(build(0).compensation).toEqual({ kind: 'manual', plan: 'refund by hand' });
		const empty = context({ ...base, compensation: 'manual', compensationPlan: '' });
		const refuse = await requestBuilder(empty, [invoice('inv-1')], readSettings(empty));
		expect(() => refuse(0)).toThrow('Item 0 has no repair plan');
	});

	it('a compensating request that carries a secret is refused before anything is sent', () => {
		const request = { ...base, compensation: 'request', compensationMethod: 'DELETE' };
		expect(() =>
			readSettings(
				context({
					...request,
					compensationUrl: 'https://crm.example.com/x/{{ $json.id }}?api_key=Kq7s3cr3t',
				}),
			),
		).toThrow('The compensating request carries a secret in its URL or body');
		expect(() =>
			readSettings(
				context({
					...request,
					compensationUrl: 'https://crm.example.com/x/{{ $json.id }}',
					compensationBody: '{"password": "Kq7s3cr3t"}',
				}),
			),
		).toThrow('The compensating request carries a secret in its URL or body');
		expect(
			readSettings(
				context({
					...request,
					compensationUrl: 'https://crm.example.com/x/{{ $json.id }}',
					compensationBody: '{"reason": "{{ $json.status }}"}',
				}),
			).compensation,
		).toMatchObject({ kind: 'request' });
	});

	it('a compensation URL that is not http(s) is refused before anything is sent', () => {
		expect(() =>
			readSettings(context({ ...base, compensation: 'request', compensationUrl: '/undo' })),
		).toThrow('Compensation URL "/undo" is not an http:// or https:// address');
	});
});

describe('the target commit horizon', () => {
	it('reconcile by lookup waits the horizon the node names (default 2 s); other strategies have none', () => {
		const lookup = (extra: Parameters) =>
			readSettings(context({ ...base, onUnknown: 'lookup', ...extra })).commitHorizonMs;
		expect(lookup({})).toBe(2_000);
		expect(lookup({ commitHorizonSeconds: 7.5 })).toBe(7_500);
		expect(() => lookup({ commitHorizonSeconds: -1 })).toThrow(/Target Commit Horizon/);
		expect(readSettings(context({ ...base, onUnknown: 'park' })).commitHorizonMs).toBeUndefined();
	});
});

describe('the scope of the keys', () => {
	it("follows the node's ID, not its name, and moves the name's records to it; a chosen scope stays", () => {
		expect(readSettings(context(base))).toMatchObject({
			scope: 'wf-billing:n1',
			adoptScope: { from: 'wf-billing:Create Invoice', to: 'wf-billing:n1' },
		});
		const chosen = readSettings(context({ ...base, idempotency: { scope: 'billing' } }));
		expect([chosen.scope, chosen.adoptScope]).toEqual(['billing', undefined]);
		const integration = readSettings(context({ ...base, integration: 'stripe' }));
		expect([integration.scope, integration.adoptScope]).toEqual(['stripe', undefined]);
	});
});

describe('what the node shows when its settings cannot be used', () => {
	const run = (ctx: IExecuteFunctions) => new IdempotentHttpWrite().execute.call(ctx);

	it('a setting the engine refuses is a NodeOperationError with what to do, before the store is opened', async () => {
		const ctx = context({ ...base, idempotency: { headerName: 'Idempotency Key' } });
		const failed = run(ctx);
		await expect(failed).rejects.toBeInstanceOf(NodeOperationError);
		await expect(failed).rejects.toMatchObject({
			message: 'Header Name "Idempotency Key" is not a valid HTTP header name',
			description: 'Use letters, digits and - (for example Idempotency-Key).',
		});
		expect(ctx.getCredentials).not.toHaveBeenCalled();
	});

	it("n8n's own error in a setting (its expression) reaches n8n as it is", async () => {
		const expressionError = new ExpressionError('invalid syntax', { itemIndex: 0 });
		const ctx = executeFunctions({
			name: 'Create Invoice',
			type: 'n8n-nodes-reliability.idempotentHttpWrite',
			parameters: base,
			items: [invoice('inv-1')],
			parameter: (name, _index, fallback) => {
				if (name === 'retries') throw expressionError;
				return base[name] ?? fallback;
			},
		});
		await expect(run(ctx)).rejects.toBe(expressionError);
	});
});
