import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { WriteOutcome } from '../../lib';
import type { WriteSettings } from './settings';

/** Outcomes as the node's two outputs: Success with the response, Failed with what an alert needs. */
export function toOutputs(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	outcomes: WriteOutcome[],
	settings: WriteSettings,
	runLink: string | null,
): INodeExecutionData[][] {
	const node = context.getNode();
	const workflow = context.getWorkflow();
	const success: INodeExecutionData[] = [];
	const failed: INodeExecutionData[] = [];
	let truncated = 0;
	for (const outcome of outcomes) {
		const pairedItem = { item: outcome.index };
		if (outcome.ok) {
			const answer = outcome.answer;
			if (answer.truncated) truncated++;
			const reliability: IDataObject = {
				key: outcome.key,
				replayed: outcome.replayed,
				attempts: outcome.attempts,
				durationMs: outcome.durationMs,
				...(answer.truncated ? { responseTruncated: true } : {}),
				...(outcome.superseded ? { superseded: true } : {}),
			};
			const body =
				answer.body !== null && typeof answer.body === 'object' && !Array.isArray(answer.body)
					? (answer.body as IDataObject)
					: { data: answer.body as IDataObject };
			const json =
				settings.responseFormat === 'full'
					? {
							statusCode: answer.status,
							headers: answer.headers as IDataObject,
							body: answer.body as IDataObject,
						}
					: settings.responseFormat === 'inputAndResponse'
						? { ...items[outcome.index].json, response: answer.body as IDataObject }
						: body;
			success.push({ json: { ...json, _reliability: reliability }, pairedItem });
		} else {
			const f = outcome.failure;
			failed.push({
				// Everything an alert needs, so a Failed output can feed the Alert workflow directly.
				json: {
					class: f.class,
					status: f.status ?? null,
					message: f.message,
					attempts: outcome.attempts,
					// The last three attempts (masked), so an alert fed from Failed can name them.
					attemptHistory: (outcome.history ?? []).slice(-3) as unknown as IDataObject[],
					key: outcome.key,
					deadLetterId: f.deadLetterId ?? null,
					retryAt: f.retryAt?.toISOString() ?? null,
					step: node.name,
					workflowId: workflow.id ?? null,
					workflowName: workflow.name ?? null,
					runLink,
					integration: settings.integration ?? null,
					impact: settings.park.impact ?? null,
					alreadyHappened: settings.park.alreadyHappened ?? null,
					owner: settings.park.owner ?? null,
				},
				pairedItem,
			});
		}
	}
	if (truncated > 0) {
		context.addExecutionHints({
			message: `${truncated} replayed response${truncated === 1 ? ' was' : 's were'} saved truncated (over Saved Body Limit): the body is its first part, as text, with _reliability.responseTruncated. Raise the limit for complete replays.`,
			type: 'warning',
			location: 'outputPane',
		});
	}
	if (settings.onFailure === 'parkAndFail' && failed.length > 0) {
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
