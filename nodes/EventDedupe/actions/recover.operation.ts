import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	completeEvents,
	ErrorClass,
	handRerunToWait,
	inRange,
	keeperFor,
	KeyStatus,
	LIMITS,
	markRerun,
	parkedSummary,
	parkKeptItems,
	parkUnsettledClaims,
	type ParkRequest,
	recordRerun,
	type KeptLetter,
	type RecoveredItem,
	returnStaleCompensations,
	returnToRecovery,
	runLink,
	settleWaitedExecution,
	type Store,
	takeCrashed,
	takeDueAlerts,
	unalertedLetters,
	type WaitedExecution,
	waitingExecutions,
} from '../../../lib';
import { range } from '../../shared/range';
import { keptItemLetter, UNFINISHED_IMPACT } from './keptItemLetter';
import { listLimit } from '../../shared/descriptions';
import { endedWithoutSuccess, whenRunEnds } from '../../shared/runEnd';

const properties: INodeProperties[] = [
	{
		displayName: 'Max Recoveries',
		name: 'maxRecoveries',
		type: 'number',
		typeOptions: range(LIMITS.maxRecoveries),
		default: 3,
		description:
			'How many times an item is run again before it is given up to be parked as crashed',
	},
	listLimit('recoverLimit'),
	{
		displayName: 'Hold For (Seconds)',
		name: 'recoverHoldSeconds',
		type: 'number',
		typeOptions: range(LIMITS.claimLeaseSeconds),
		default: 600,
		description:
			'The longest this recovery run holds the items it takes. It renews them while it runs, so the items of a run that died with n8n are taken again within a minute; one it has held this long is taken again anyway.',
	},
	{
		displayName: 'Workflow ID',
		name: 'recoverWorkflowId',
		type: 'string',
		default: '',
		description: 'Only items of this workflow; empty for all',
	},
];

export const description = updateDisplayOptions({ show: { operation: ['recover'] } }, properties);

/**
 * Recover Crashed: takes the inbox items whose execution died (fenced: two recovery runs never
 * take one) and runs each through its workflow's Execute Workflow Trigger (the entry Replay
 * uses), with `{ payload, _recover }`: steps that already succeeded return their saved results,
 * so the item resumes from its last completed step. A re-run that finishes completes the claim
 * (the workflow parks what it cannot do itself); one that throws goes back to Recover. An item
 * run `Max Recoveries` times, or whose item was not kept, is parked as crashed with its payload,
 * the dead execution's link and what its write steps had done.
 *
 * Before taking, it settles the executions that waited (a Wait n8n offloaded, resumed in another
 * process with new hooks) and whose hold lapsed, by what n8n's record of each says: still waiting
 * or running (held), succeeded (done), failed or stopped (parked), gone (done, or parked for a
 * person, as its workflow's save settings say). After the re-runs it sweeps: failed claims that
 * nothing holds (an error workflow of the user's that parks nothing, a settler that died
 * half-way, a sub-workflow whose caller went on without it) are parked, one letter per item.
 *
 * Records a Compensate run held and never closed nor released (it stopped or died between two
 * reversals, 30 minutes ago or more) go back to new with their alert due: a person checks what
 * was reversed. Letters whose alert is due (a stopped execution's items, parked where no workflow
 * ran after the park) are taken too, up to the same limit, and go out on Give Up with the records parked
 * here, so the Alert after it names each once. So do the letters that a run parked and then
 * died before its own Alert ran (unchanged for two minutes, in no issue): Notify's issues keep
 * an item that reaches it twice to one page.
 *
 * Outputs: Re-run (one item per run, with the sub-execution) and Give Up (the parked records,
 * the swept ones, and the letters whose alert was due or never sent).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const executionId = this.getExecutionId();
	const limit = inRange(this.getNodeParameter('recoverLimit', 0, 50), LIMITS.listLimit);
	const workflowId =
		String(this.getNodeParameter('recoverWorkflowId', 0, '') ?? '').trim() || undefined;
	const holdSeconds = inRange(
		this.getNodeParameter('recoverHoldSeconds', 0, 600),
		LIMITS.claimLeaseSeconds,
	);
	// The items' lease follows the run: short, and renewed by this process while the run lives.
	const leaseSeconds = Math.min(holdSeconds, RUN_LEASE_SECONDS);
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	await settleWaited(this, store, { limit, workflowId, baseUrl });
	const taken = await takeCrashed(store, {
		executionId,
		limit,
		maxAttempts: inRange(this.getNodeParameter('maxRecoveries', 0, 3), LIMITS.maxRecoveries),
		leaseSeconds,
		workflowId,
	});
	holdWhileRunning(this, store, executionId, taken, leaseSeconds, holdSeconds);
	const linkOf = (item: RecoveredItem) => runLink(baseUrl, item.workflowId, item.originExecutionId);
	const about = (item: RecoveredItem): IDataObject => ({
		consumer: item.consumer,
		eventId: item.eventId,
		workflowId: item.workflowId,
		deadExecutionId: item.originExecutionId,
		runLink: linkOf(item) ?? null,
		attempt: item.attempt,
	});

	const held = (item: RecoveredItem) => ({
		consumer: item.consumer,
		eventId: item.eventId,
		executionId,
	});
	const rerun: INodeExecutionData[] = [];
	for (const item of taken.filter((t) => !t.givenUp)) {
		try {
			if (!item.workflowId) throw new Error('the claim does not name its workflow');
			// Marked first: a sub-workflow that claims inside this re-run is part of this item. One
			// this run no longer holds (another recovery run took it meanwhile) is that run's.
			if (!(await markRerun(store, held(item)))) {
				rerun.push({
					json: { ...about(item), outcome: 'taken by another recovery run' },
					pairedItem: { item: 0 },
				});
				continue;
			}
			// The re-run names this run as its caller: its failure is this item's (the Error handler
			// parks no record of it beside the item), and a claim it makes is held by this run.
			const result = await this.executeWorkflow(
				{ id: item.workflowId },
				[{ json: { payload: item.payload as IDataObject, _recover: about(item) } }],
				undefined,
				{
					parentExecution: {
						executionId,
						workflowId: String(this.getWorkflow().id),
						shouldResume: false,
					},
				},
			);
			if (result.waitTill && result.executionId) {
				// The re-run waits (a Wait n8n offloaded): not done yet. The item is the re-run's
				// (recorded as its re-run too), settled by its end or by n8n's record of it, as any
				// run that waits.
				await handRerunToWait(store, {
					...held(item),
					rerunExecution: result.executionId,
					waitTill: new Date(result.waitTill),
				});
				rerun.push({
					json: { ...about(item), outcome: 'waiting', subExecutionId: result.executionId },
					pairedItem: { item: 0 },
				});
				continue;
			}
			// Recorded before the next re-run starts: a sub-workflow of this one that claims later
			// (one it did not wait for) is still this item's.
			if (result.executionId)
				await recordRerun(store, { ...held(item), rerunExecution: result.executionId });
			const [done] = await completeEvents(store, item.consumer, [item.eventId], executionId);
			rerun.push({
				json: {
					...about(item),
					outcome: 'finished',
					subExecutionId: result.executionId,
					completed: done.changed,
				},
				pairedItem: { item: 0 },
			});
		} catch (error) {
			const message = error instanceof Error ? error.message : String(error);
			// n8n names the failed re-run's execution on the error it throws.
			const failedRun = (error as { executionId?: unknown } | undefined)?.executionId;
			if (typeof failedRun === 'string' && failedRun !== '')
				await recordRerun(store, { ...held(item), rerunExecution: failedRun }).catch(
					() => undefined,
				);
			await returnToRecovery(store, {
				consumer: item.consumer,
				eventId: item.eventId,
				executionId,
				message,
			}).catch(() => undefined);
			rerun.push({
				json: { ...about(item), outcome: 'failed', error: message },
				pairedItem: { item: 0 },
			});
		}
	}

	const givenUp = taken.filter((t) => t.givenUp);
	let parked: INodeExecutionData[] = [];
	if (givenUp.length > 0) {
		const happened = (item: RecoveredItem) =>
			item.steps.length === 0
				? 'no write step had started'
				: item.steps
						.map(
							(s) =>
								`${s.step}: ${s.status === KeyStatus.succeeded ? 'done' : s.status === KeyStatus.failed ? 'not done' : 'may have taken effect'}`,
						)
						.join('; ');
		const requests: ParkRequest[] = givenUp.map((item) => ({
			workflowId: item.workflowId ?? 'unknown',
			executionId: item.originExecutionId ?? undefined,
			step: 'crashed',
			...keptItemLetter(item),
			runLink: linkOf(item),
			errorClass: ErrorClass.crashed,
			errorMessage: `${item.reason ?? 'its execution died'} (event ${item.eventId} of ${item.consumer})`,
			attempts: item.attempt,
			alreadyHappened: happened(item),
			impact: UNFINISHED_IMPACT,
		}));
		// One item at a time: each dead execution's write letters fold into its item's letter.
		const results: KeptLetter[] = [];
		for (const [i, request] of requests.entries())
			results.push(
				...(await parkKeptItems(store, [request], {
					executionId: givenUp[i].originExecutionId ?? undefined,
					claims: [givenUp[i]],
				})),
			);
		// An item whose letter took the issue a write letter of it was alerted in is not alerted again.
		parked = results
			.map((result, i) => ({
				json: {
					...about(givenUp[i]),
					deadLetterId: result.id,
					status: result.status,
					reason: givenUp[i].reason,
					// The record's summary, as Park outputs it: what an alert needs.
					_deadLetter: parkedSummary(requests[i], result),
				},
				pairedItem: { item: 0 },
			}))
			.filter((_, i) => !results[i].alreadyAlerted);
	}
	// Failed claims nothing holds, parked and alerted here (a store error leaves them to the next run).
	const swept = (
		await parkUnsettledClaims(store, { limit, workflowId, baseUrl }).catch(() => [])
	).map((claim): INodeExecutionData => ({
		json: {
			consumer: claim.consumer,
			eventId: claim.eventId,
			workflowId: claim.request.workflowId,
			deadExecutionId: claim.request.executionId ?? null,
			runLink: claim.request.runLink ?? null,
			deadLetterId: claim.result.id,
			status: claim.result.status,
			reason: claim.request.errorMessage ?? null,
			swept: true,
			_deadLetter: parkedSummary(claim.request, claim.result),
		},
		pairedItem: { item: 0 },
	}));
	// Records a Compensate run held and never closed (it stopped or died): back to a person, due.
	await returnStaleCompensations(store, {
		actor: `Recover (execution ${executionId})`,
		limit,
		workflowId,
	}).catch(() => undefined);
	// Taken after this run's parks committed; a store error here leaves them due for the next run
	// and loses none of the alerts of what this run gave up.
	const due = (await takeDueAlerts(store, limit, workflowId).catch(() => [])).map(
		(letter): INodeExecutionData => ({
			json: { ...letter, attempt_history: letter.attempt_history as IDataObject[], alertDue: true },
			pairedItem: { item: 0 },
		}),
	);
	// Letters a run parked and died before its Alert (n8n killed in between): past a grace, so
	// the Alert of a run still under way has had its time. Notify's issues keep this to one page.
	const unalerted = (await unalertedLetters(store, { limit, workflowId }).catch(() => []))
		.filter((letter) => !due.some((d) => String(d.json.id) === String(letter.id)))
		.map((letter): INodeExecutionData => ({
			json: {
				...letter,
				attempt_history: letter.attempt_history as IDataObject[],
				unalerted: true,
			},
			pairedItem: { item: 0 },
		}));
	return [rerun, [...parked, ...swept, ...due, ...unalerted]];
}

/**
 * Settles the executions that waited and whose hold lapsed, each by what n8n's record of it says
 * (read through the node context, from n8n's own database, so in queue mode too). One that n8n
 * cannot be asked about now (its database busy) is asked again at the next run.
 */
async function settleWaited(
	context: IExecuteFunctions,
	store: Store,
	at: { limit: number; workflowId?: string; baseUrl: string },
): Promise<void> {
	for (const waiting of await waitingExecutions(store, at)) {
		// One n8n cannot read now is asked again later, held meanwhile (not ahead of the others),
		// and taken as crashed an hour after its wait, as one still running would be.
		const said: WaitedExecution = await askN8n(context, waiting.executionId).catch(() => ({
			state: 'waiting' as const,
		}));
		// One that cannot be settled now (the store refused its letter) is asked about again later;
		// it keeps none of the others, nor this run's re-runs, from their turn.
		await settleWaitedExecution(store, waiting, said, {
			runLink: runLink(at.baseUrl, waiting.workflowId, waiting.executionId),
		}).catch(() =>
			settleWaitedExecution(store, waiting, { state: 'waiting' }, {}).catch(() => undefined),
		);
	}
}

/** How n8n's saved record of an execution reads: waiting or running, ended how, or gone. */
async function askN8n(context: IExecuteFunctions, executionId: string): Promise<WaitedExecution> {
	if (typeof context.getExecutionDataById !== 'function') return { state: 'unknown' };
	const data = await context.getExecutionDataById(executionId);
	if (!data) return { state: 'gone' };
	// Ended with an error, first: a waiting execution that a person stopped keeps its waitTill in
	// its run data beside the cancel (n8n runs no hook and no error workflow for it).
	const error = data.resultData?.error;
	if (error)
		return {
			state: 'failed',
			// As n8n itself tells a cancelled run from a failed one.
			canceled: Boolean(error.name?.includes('Cancelled') || error.message?.includes('canceled')),
			message: error.message,
			step: data.resultData?.lastNodeExecuted,
		};
	// Still waiting, or resumed and running: n8n saves the run data again only when it ends.
	if (data.waitTill) return { state: 'waiting', waitTill: new Date(data.waitTill) };
	// Saved while it runs (Save Execution Progress): nodes still to run.
	if ((data.executionData?.nodeExecutionStack?.length ?? 0) > 0) return { state: 'waiting' };
	return { state: 'success' };
}

/** How long the items of a run that died stay held: the run renews them a third of this apart. */
const RUN_LEASE_SECONDS = 60;

/**
 * Holds the items this run took while it runs: the process renews their lease (the keeper, as
 * for Event Dedupe's claims), for at most Hold For, so the items of a run that died with n8n or
 * its worker lapse within a lease and the next run takes them. When the run ends without
 * success (stopped, timed out, failed, its worker drained), the items it did not finish go back
 * to Recover as it ends (their hold ends now, the attempt stays counted), so the next run takes
 * them within a minute. An item finished, returned already or taken by another run since is left
 * alone (the return is fenced by this execution). One whose re-run was still in flight at a Stop
 * may run again while that re-run finishes: its write keys keep the two to one effect.
 */
function holdWhileRunning(
	context: IExecuteFunctions,
	store: Store,
	executionId: string,
	taken: RecoveredItem[],
	leaseSeconds: number,
	holdSeconds: number,
): void {
	const held = taken.filter((item) => !item.givenUp);
	if (held.length === 0) return;
	const keeper = keeperFor(store, leaseSeconds);
	keeper.keep(executionId, holdSeconds * 1000);
	whenRunEnds(context, async (run) => {
		keeper.drop(executionId);
		if (!endedWithoutSuccess(run)) return;
		const message = `the recovery run (execution ${executionId}) ended ${run.status ?? 'without success'} before it finished this item: taken again by the next run`;
		for (const item of held)
			await returnToRecovery(store, {
				consumer: item.consumer,
				eventId: item.eventId,
				executionId,
				message,
			}).catch(() => undefined);
	});
}
