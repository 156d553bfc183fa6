import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { ClaimOutcome, type ClaimResult } from '../../../lib';
import type { ClaimSettings } from './claimSettings';

/**
 * Routes each claimed item to New, Duplicate or Stale; Invalid holds the items that could not be
 * claimed. Which outputs there are follows the settings, as the node's outputs expression does.
 */
export function claimOutputs(
	items: INodeExecutionData[],
	results: ClaimResult[],
	invalid: INodeExecutionData[],
	settings: ClaimSettings,
): INodeExecutionData[][] {
	const newItems: INodeExecutionData[] = [];
	const duplicates: INodeExecutionData[] = [];
	const stale: INodeExecutionData[] = [];
	for (const result of results) {
		const item = items[result.index];
		const pairedItem = { item: result.index };
		if (result.outcome === ClaimOutcome.new) {
			newItems.push({ json: item.json, binary: item.binary, pairedItem });
		} else if (result.outcome === ClaimOutcome.duplicate) {
			duplicates.push({
				json: {
					...item.json,
					_dedupe: {
						eventId: result.eventId,
						outcome: result.outcome,
						reason: result.reason,
						claimedBy: result.claimedBy ?? null,
					},
				},
				binary: item.binary,
				pairedItem,
			});
		} else {
			// A version that fits a JavaScript number exactly is shown as one; a longer one as text.
			const exact = String(Number(result.lastVersion)) === result.lastVersion;
			stale.push({
				json: {
					...item.json,
					_dedupe: {
						eventId: result.eventId,
						outcome: result.outcome,
						lastVersion: exact ? Number(result.lastVersion) : result.lastVersion,
					},
				},
				binary: item.binary,
				pairedItem,
			});
		}
	}
	const outputs = [newItems, duplicates];
	if (settings.checkOrder) outputs.push(stale);
	if (!settings.failInvalid) outputs.push(invalid);
	return outputs;
}

/** Without n8n's end-of-execution hook, only a Complete step (or an hour) ends the inbox's hold. */
export function warnNoExecutionEnd(context: IExecuteFunctions): void {
	context.addExecutionHints({
		message:
			'This n8n does not tell Event Dedupe when an execution ends: the claims are held for up to an hour. Add an Event Dedupe Complete step at the end of the workflow.',
		type: 'warning',
		location: 'outputPane',
	});
}

/** Items over the inbox's cap are claimed without being kept: a crash parks them without the item. */
export function warnOverCap(context: IExecuteFunctions, overCap: number): void {
	const one = overCap === 1;
	context.addExecutionHints({
		message: `${overCap} item${one ? ' was' : 's were'} over the inbox's Largest Item and ${one ? 'is' : 'are'} not kept with ${one ? 'its claim' : 'their claims'}: if n8n dies during this execution, ${one ? 'it is' : 'they are'} parked without the item. Raise Largest Item (KB) to keep ${one ? 'it' : 'them'}.`,
		type: 'warning',
		location: 'outputPane',
	});
}
