import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { claimEvents, ClaimOutcome, type Store } from '../../../lib';
import { consumerName } from '../../shared/consumer';
import { claimOutputs, warnNoExecutionEnd, warnOverCap } from './claimOutputs';
import { claimRequestsOf } from './claimRequests';
import { claimSettingsOf } from './claimSettings';
import { holdUntilExecutionEnds } from './executionEnd';

/**
 * Claim: reads every item's event ID (and entity version, and validates it), claims the whole
 * run in one batched statement, and routes each item to New, Duplicate, Stale or Invalid. An
 * item that cannot be claimed (no usable event ID or version) is never New: it fails the run,
 * or with Continue On Fail goes to Invalid with the reason.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const settings = claimSettingsOf(this);
	const { requests, invalid, overCap } = await claimRequestsOf(this, items, settings);
	const results = await claimEvents(
		store,
		{
			consumer: consumerName(this),
			workflowId: this.getWorkflow().id,
			executionId: this.getExecutionId(),
			mode: settings.mode,
			leaseSeconds: settings.leaseSeconds,
			retentionDays: settings.retentionDays,
		},
		requests,
	);
	if (settings.inbox && results.some((r) => r.outcome === ClaimOutcome.new)) {
		if (!holdUntilExecutionEnds(this, store, settings.leaseSeconds)) warnNoExecutionEnd(this);
	}
	if (overCap > 0) warnOverCap(this, overCap);
	return claimOutputs(items, results, invalid, settings);
}
