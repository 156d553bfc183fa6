import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { runLink, runWrites, type WriteRequest } from '../../lib';
import { forEachItem } from '../shared/router';
import { sourceVersionOf } from '../shared/sourceVersion';
import { storeCredentialOf, storeFor } from '../shared/store';
import { toOutputs } from './outputs';
import { type PreparedRequest, requestBuilder } from './request';
import { readSettings } from './settings';
import { transport } from './transport';

/**
 * Idempotent HTTP Write: every item's request and key first (a bad item is a clear error naming
 * it, before anything is claimed or sent; with Continue On Fail it ends alone on Failed, parked),
 * then the engine claims, sends and settles the run. The node runs it through showingErrors, so
 * what it throws reaches n8n as every operation's errors do.
 */
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
	const settings = readSettings(this);
	// The store's credential is read while the request's own credential is: n8n reads each from
	// its database, and one after the other they add up. The store is opened with it only after
	// the items are checked, so an item's error still comes first and a run that fails there
	// touches no store.
	const storeCredential = storeCredentialOf(this);
	storeCredential.catch(() => undefined);
	const build = await requestBuilder(this, items, settings);
	const requests: Array<PreparedRequest | WriteRequest> = [];
	await forEachItem(
		this,
		items,
		(index) => {
			requests.push(build(index));
		},
		(errorOutput, index) => {
			requests.push({
				index,
				scope: settings.scope,
				key: '',
				fingerprint: '',
				payload: items[index].json,
				invalid: String(errorOutput.json.error),
			});
		},
	);

	const store = await storeFor(this, storeCredential);
	const workflow = this.getWorkflow();
	const executionId = this.getExecutionId();
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	const link = runLink(baseUrl, workflow.id, executionId) ?? null;
	const byIndex = new Map(
		requests.filter((r): r is PreparedRequest => 'options' in r).map((r) => [r.index, r]),
	);
	const outcomes = await runWrites(
		store,
		{
			workflowId: workflow.id,
			workflowName: workflow.name,
			executionId,
			node: node.name,
			runLink: link ?? undefined,
			integration: settings.integration,
			retentionDays: settings.retentionDays,
			policy: settings.policy,
			onUnknown: settings.onUnknown,
			adoptScope: settings.adoptScope,
			inFlightGraceMs: settings.commitHorizonMs,
			concurrency: settings.concurrency,
			maxSavedBodyChars: settings.maxSavedBodyChars,
			park: settings.onFailure !== 'route',
			parkIfStopped: settings.parkIfStopped,
			...settings.park,
			breaker: settings.breaker,
			sourceVersion: sourceVersionOf(this),
			maskFields: settings.maskFields,
		},
		requests,
		{
			...transport(this, settings.authentication, byIndex),
			// n8n's Stop, the API's stop, a workflow timeout, a worker's drain: nothing more is sent.
			signal: this.getExecutionCancelSignal?.(),
			// A fire drill on the integration: a warning in the output, while it lasts.
			notice: (message) =>
				this.addExecutionHints({ message, type: 'warning', location: 'outputPane' }),
		},
	);
	return toOutputs(this, items, outcomes, settings, link);
}
