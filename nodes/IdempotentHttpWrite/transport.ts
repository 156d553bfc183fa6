import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';
import {
	type HttpAnswer,
	leaseEnded,
	type LookupResult,
	NOT_SENT_CODES,
	type SendResult,
	type WriteDeps,
} from '../../lib';
import type { PreparedRequest } from './request';

/**
 * The engine's transport: n8n's own HTTP helpers make every call, so n8n's credential types,
 * proxies and TLS settings apply. Errors become what the engine reasons about: never sent (a
 * refused connection) or lost (anything after the connection was open: the effect may exist).
 */

/** Error codes of n8n's HTTP helpers (axios), wherever the wrapper put them. */
const errorCode = (error: unknown): string => {
	const e = error as { code?: unknown; cause?: { code?: unknown }; context?: { code?: unknown } };
	return String(e?.code ?? e?.cause?.code ?? e?.context?.code ?? 'ERROR');
};

export function transport(
	context: IExecuteFunctions,
	authentication: string,
	byIndex: Map<number, PreparedRequest>,
): Pick<WriteDeps, 'send' | 'lookup'> {
	// A cancelled execution's request in flight is abandoned: its effect may exist (lost).
	const cancelSignal = context.getExecutionCancelSignal?.();
	const call = async (
		request: IHttpRequestOptions,
		deadline?: AbortSignal,
	): Promise<HttpAnswer> => {
		const signals = [cancelSignal, deadline].filter((s): s is AbortSignal => s !== undefined);
		const abortSignal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
		const options: IHttpRequestOptions = abortSignal ? { ...request, abortSignal } : request;
		const response = (
			authentication === 'oAuth2Api'
				? await context.helpers.httpRequestWithAuthentication.call(context, 'oAuth2Api', options)
				: await context.helpers.httpRequest(options)
		) as { statusCode: number; headers: Record<string, string>; body: unknown };
		return { status: response.statusCode, headers: response.headers ?? {}, body: response.body };
	};
	return {
		send: async (request, _attempt, wire): Promise<SendResult> => {
			// The lease covers the request until wire.notAfter: past it another owner may send, so
			// nothing leaves after it (n8n's credential read or a stalled event loop can delay the
			// call), and a request still in flight then is abandoned (lost: it may have landed).
			// Within the window n8n's own timeout ends the request first, with its own message.
			const left = wire.notAfter - Date.now();
			if (left <= 0) return leaseEnded();
			try {
				const answer = await call(byIndex.get(request.index)!.options, AbortSignal.timeout(left));
				return { kind: 'response', answer };
			} catch (error) {
				const code = errorCode(error);
				return {
					kind: NOT_SENT_CODES.has(code) ? 'not_sent' : 'lost',
					code,
					message: error instanceof Error ? error.message : String(error),
				};
			}
		},
		// A failed lookup throws: the engine retries it within the item's budget.
		lookup: async (request): Promise<LookupResult> => {
			const prepared = byIndex.get(request.index)!;
			if (!prepared.lookupUrl)
				return { kind: 'conflict', message: 'no Lookup URL is set for this item' };
			const answer = await call({
				...prepared.options,
				method: 'GET',
				url: prepared.lookupUrl,
				body: undefined,
				json: true,
			});
			if (answer.status >= 200 && answer.status < 300) return { kind: 'exists', answer };
			if (answer.status === 404) return { kind: 'absent' };
			return { kind: 'conflict', message: `lookup answered ${answer.status}` };
		},
	};
}
