import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import {
	compensateDeadLetter,
	type CompensateDeps,
	leaseEnded,
	NOT_SENT_CODES,
	type Store,
} from '../../../lib';
import { itemValueReader } from '../../shared/itemValues';
import { outputOfEachItem } from '../../shared/router';

/** Compensate reads Dead Letter ID, Actor and Reason, which Update Status declares for it too. */
export const description: INodeProperties[] = [];

/**
 * Compensate: reverses the steps each record's item had already taken, newest first, each
 * compensating request sent once under its own key; outputs what was sent, the manual checklist
 * and, when a compensation failed, which one (parked as a dead letter of its own).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const idOf = itemValueReader(this, items, 'targetId');
	const executionId = this.getExecutionId();
	const cancelSignal = this.getExecutionCancelSignal?.();
	const deps: CompensateDeps = {
		send: async (request, wire) => {
			// As the write's transport: nothing leaves after the lease that covers the attempt, and a
			// request still in flight then (or when the execution is stopped) is abandoned (lost).
			const left = wire.notAfter - Date.now();
			if (left <= 0) return leaseEnded();
			const deadline = AbortSignal.timeout(left);
			const abortSignal = cancelSignal ? AbortSignal.any([cancelSignal, deadline]) : deadline;
			try {
				const response = (await this.helpers.httpRequest({
					abortSignal,
					method: request.method as 'DELETE',
					url: request.url,
					headers: { 'Idempotency-Key': request.key },
					...(request.body === undefined
						? {}
						: { body: request.body as IDataObject, json: typeof request.body !== 'string' }),
					returnFullResponse: true,
					ignoreHttpStatusErrors: true,
					timeout: 10_000,
				})) as { statusCode: number; headers: Record<string, string>; body: unknown };
				return {
					kind: 'response',
					answer: {
						status: response.statusCode,
						headers: response.headers ?? {},
						body: response.body,
					},
				};
			} catch (error) {
				const e = error as { code?: unknown; cause?: { code?: unknown } };
				const code = String(e?.code ?? e?.cause?.code ?? 'ERROR');
				return {
					kind: NOT_SENT_CODES.has(code) ? 'not_sent' : 'lost',
					code,
					message: error instanceof Error ? error.message : String(error),
				};
			}
		},
	};
	return [
		await outputOfEachItem(this, items, async (index) => {
			const result = await compensateDeadLetter(
				store,
				{
					id: String(idOf(index) ?? '').trim(),
					actor: String(this.getNodeParameter('actor', index, '') ?? '').trim(),
					reason: String(this.getNodeParameter('reason', index, '') ?? '').trim() || undefined,
					executionId: `${executionId}:${index}`,
				},
				deps,
			);
			return { json: result as unknown as IDataObject, pairedItem: { item: index } };
		}),
	];
}
