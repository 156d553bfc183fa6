import { getDeadLettersByKey, parkItems, takeDueAlerts } from '../../lib/deadletter';
import {
	claimEvents,
	ClaimMode,
	completeEvents,
	eventLetterKey,
	ExecutionEnd,
	failExecution,
	handRerunToWait,
	markRerun,
	parkUnsettledClaims,
	recordRerun,
	releaseEvents,
	releaseExecutionClaims,
	resumeExecutionClaims,
	settleExecutionClaims,
	settleExecutionEnd,
	settleWaitedExecution,
	takeCrashed,
	waitingExecutions,
} from '../../lib/dedupe';
import { purgeExpiredEvents } from '../../lib/dedupe/purge';
import { notifyAlerts } from '../../lib/alerts';
import { adminQuery, testStore } from '../helpers/store';

/**
 * Every item accounted for whatever the user configured: their own error workflow (or none, or
 * one that dies), a Wait that n8n offloads and resumes with new hooks, a claim in a sub-workflow
 * under a claiming parent, a stop while a write's letter is open. Each test ends by reading the
 * store: the claim, the letters of the item, what an alert would take.
 */
const { store, schema, cleanup } = testStore('config_accounting');
afterAll(cleanup);

let n = 0;
const CONSUMER = 'orders';
const context = (executionId = `cfg-${++n}`, ancestors: string[] = []) => ({
	consumer: CONSUMER,
	workflowId: 'wf-orders',
	executionId,
	mode: ClaimMode.untilExecutionEnds,
	leaseSeconds: 60,
	retentionDays: 30,
	ancestors,
});
const order = (id: string) => ({ index: 0, eventId: id, payload: { order: id, amount: 40 } });
const claimRow = async (eventId: string, consumer = CONSUMER) =>
	(
		await adminQuery<{ status: string; settled_as: string | null; waiting_till: Date | null }>(
			`SELECT status, settled_as, waiting_till FROM "${schema}".processed_events WHERE consumer = $1 AND event_id = $2`,
			[consumer, eventId],
		)
	)[0];
const lettersOf = async (key: string) => await getDeadLettersByKey(store, [key]);
const openLettersOf = async (key: string) =>
	(await lettersOf(key)).filter((l) =>
		['new', 'held', 'replay_requested', 'being_fixed'].includes(l.status),
	);
const sweep = () =>
	parkUnsettledClaims(store, { limit: 50, graceSeconds: 0, baseUrl: 'http://n8n.local' });
const ended = (executionId: string, status: string, extra = {}) =>
	settleExecutionEnd(store, {
		executionId,
		status,
		workflowId: 'wf-orders',
		workflowName: 'Orders',
		step: 'Post to ERP',
		runLink: `http://n8n.local/workflow/wf-orders/executions/${executionId}`,
		reason: status === 'error' ? 'ERP answered 500' : undefined,
		errorWorkflowNamed: true,
		...extra,
	});

describe("a workflow that names the user's own error workflow (a chat post that parks nothing)", () => {
	it('its failed item is parked by its own end: one letter with the error, the node and the run link, its alert due', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-1')]);
		await ended(run.executionId, 'error');
		expect(await claimRow('CFG-1')).toMatchObject({ status: 'failed', settled_as: 'parked' });
		const [letter] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-1'));
		expect(letter).toMatchObject({
			status: 'new',
			error_class: 'execution',
			error_message: 'ERP answered 500',
			step: 'Post to ERP',
			run_link: `http://n8n.local/workflow/wf-orders/executions/${run.executionId}`,
			payload: { order: 'CFG-1', amount: 40 },
		});
		// Recover sends its alert (nothing runs after the end to do it), once.
		const due = await takeDueAlerts(store, 50, 'wf-orders');
		expect(due.map((d) => String(d.id))).toContain(String(letter.id));
		expect((await takeDueAlerts(store, 50, 'wf-orders')).map((d) => String(d.id))).not.toContain(
			String(letter.id),
		);
	});

	it('the bundled Error handler running first parks it, and the end then parks nothing twice', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-2')]);
		const settled = await failExecution(store, {
			executionId: run.executionId,
			crashed: false,
			message: 'ERP answered 500',
		});
		expect(settled).toMatchObject({ repeated: false, items: [{ eventId: 'CFG-2' }] });
		await parkItems(store, [
			{
				workflowId: 'wf-orders',
				executionId: run.executionId,
				step: 'Post to ERP',
				idempotencyKey: eventLetterKey(CONSUMER, 'CFG-2'),
				errorClass: 'execution',
				payload: settled.items[0].payload,
			},
		]);
		await ended(run.executionId, 'error');
		const letters = await lettersOf(eventLetterKey(CONSUMER, 'CFG-2'));
		expect(letters).toHaveLength(1);
		expect(letters[0]).toMatchObject({ failure_count: 1, alert_due: null });
		// The Error handler running after the end is a repeat: nothing to park or alert.
		expect(
			await failExecution(store, { executionId: run.executionId, crashed: false }),
		).toMatchObject({ repeated: true, items: [] });
	});

	it('a failed run whose items nothing parked (a settler that died) is parked by the sweep, and never purged before', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-3')]);
		// An end of an older kind (or an Error handler that died after Settle Failed Execution).
		await settleExecutionClaims(store, run.executionId, {
			status: ExecutionEnd.error,
			message: 'ERP answered 500',
		});
		await adminQuery(
			`UPDATE "${schema}".processed_events SET expires_at = now() - interval '1 day' WHERE event_id = 'CFG-3'`,
		);
		await purgeExpiredEvents(store, CONSUMER);
		expect(await claimRow('CFG-3')).toMatchObject({ status: 'failed', settled_as: null });
		const swept = await sweep();
		expect(swept.map((s) => s.eventId)).toContain('CFG-3');
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-3'))).toMatchObject([
			{ error_class: 'execution', error_message: 'ERP answered 500', payload: { order: 'CFG-3' } },
		]);
		expect(await claimRow('CFG-3')).toMatchObject({ settled_as: 'parked' });
		// Held by its letter now: the next sweep parks nothing, and the purge may take the claim.
		expect((await sweep()).map((s) => s.eventId)).not.toContain('CFG-3');
		await purgeExpiredEvents(store, CONSUMER);
		expect(await claimRow('CFG-3')).toBeUndefined();
	});

	it('a run from the editor is left failed for the person testing, and an item released by Release is dropped by that rule: neither swept', async () => {
		const editor = context();
		await claimEvents(store, editor, [order('CFG-4')]);
		await ended(editor.executionId, 'error', { testRun: true });
		const released = context();
		await claimEvents(store, released, [order('CFG-5')]);
		expect(await releaseEvents(store, CONSUMER, ['CFG-5'], released.executionId)).toEqual([
			'CFG-5',
		]);
		expect((await sweep()).map((s) => s.eventId)).toEqual(
			expect.not.arrayContaining(['CFG-4', 'CFG-5']),
		);
		expect(await claimRow('CFG-4')).toMatchObject({ status: 'failed', settled_as: 'dropped' });
		expect(await claimRow('CFG-5')).toMatchObject({ status: 'failed', settled_as: 'dropped' });
		expect(await lettersOf(eventLetterKey(CONSUMER, 'CFG-4'))).toEqual([]);
	});
});

describe('a claim in a sub-workflow under a parent that claims', () => {
	const SUB = 'order-lines';

	it('a failure that propagates gives one letter, the parent item, and the sub-workflow claim is held by it', async () => {
		const parent = context();
		await claimEvents(store, parent, [order('CFG-10')]);
		const child = { ...context(undefined, [parent.executionId]), consumer: SUB };
		await claimEvents(store, child, [order('CFG-10-line')]);
		await ended(child.executionId, 'error');
		// n8n runs the sub-workflow's error workflow too: its item is the parent's to park.
		expect(
			await failExecution(store, { executionId: child.executionId, crashed: false }),
		).toMatchObject({ repeated: true });
		await ended(parent.executionId, 'error');
		await sweep();
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-10'))).toHaveLength(1);
		expect(await lettersOf(eventLetterKey(SUB, 'CFG-10-line'))).toEqual([]);
		expect(await claimRow('CFG-10-line', SUB)).toMatchObject({
			status: 'failed',
			settled_as: 'covered',
		});
		// A replay of the parent's letter calls the sub-workflow again: its claim is new.
		const replayChild = { ...context(undefined, ['replay-run']), consumer: SUB };
		expect((await claimEvents(store, replayChild, [order('CFG-10-line')]))[0].outcome).toBe('new');
	});

	it('a parent that goes on without the failed sub-workflow (Continue On Fail) leaves the sub-workflow item one letter of its own', async () => {
		const parent = context();
		await claimEvents(store, parent, [order('CFG-11')]);
		const child = { ...context(undefined, [parent.executionId]), consumer: SUB };
		await claimEvents(store, child, [order('CFG-11-line')]);
		await ended(child.executionId, 'error');
		// While the parent runs, its item holds the sub-workflow's: the sweep waits.
		expect((await sweep()).map((s) => s.eventId)).not.toContain('CFG-11-line');
		expect(await claimRow('CFG-11-line', SUB)).toMatchObject({ settled_as: null });
		await ended(parent.executionId, 'success');
		const swept = await sweep();
		expect(swept.map((s) => s.eventId)).toContain('CFG-11-line');
		expect(await openLettersOf(eventLetterKey(SUB, 'CFG-11-line'))).toMatchObject([
			{ error_message: 'ERP answered 500' },
		]);
		expect(await claimRow('CFG-11', CONSUMER)).toMatchObject({ status: 'done' });
	});
});

describe('a Wait that n8n offloads (the run resumes with new hooks, maybe on another worker)', () => {
	const waitFor = async (eventId: string, ifGone: 'done' | 'check' = 'check') => {
		const run = context();
		await claimEvents(store, run, [order(eventId)]);
		await ended(run.executionId, 'waiting', { waitTill: new Date(Date.now() + 90_000), ifGone });
		// The hold runs out (the wait and its lease are over).
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second', ask_at = now() - interval '1 second' WHERE event_id = $1`,
			[eventId],
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === run.executionId,
		);
		return { run, waiting };
	};

	it('its lapsed claims are never re-run by Recover: n8n is asked, and a resumed run that succeeded is done', async () => {
		const { waiting } = await waitFor('CFG-20');
		expect(waiting).toBeDefined();
		expect(
			(
				await takeCrashed(store, {
					executionId: 'rec-1',
					limit: 50,
					maxAttempts: 3,
					leaseSeconds: 60,
				})
			).map((t) => t.eventId),
		).not.toContain('CFG-20');
		expect(await settleWaitedExecution(store, waiting, { state: 'success' }, {})).toBe('done');
		expect(await claimRow('CFG-20')).toMatchObject({ status: 'done' });
		expect(await lettersOf(eventLetterKey(CONSUMER, 'CFG-20'))).toEqual([]);
	});

	it('one still waiting (or still running after its resume) is held again; past an hour after its wait it goes to Recover', async () => {
		const { waiting } = await waitFor('CFG-21');
		const waitTill = new Date(Date.now() + 90_000);
		expect(await settleWaitedExecution(store, waiting, { state: 'waiting', waitTill }, {})).toBe(
			'held',
		);
		expect(await claimRow('CFG-21')).toMatchObject({ status: 'in_progress' });
		expect((await waitingExecutions(store, { limit: 50 })).map((w) => w.executionId)).not.toContain(
			waiting.executionId,
		);
		const later = new Date(waitTill.getTime() + 2 * 3600_000);
		expect(
			await settleWaitedExecution(store, waiting, { state: 'waiting', waitTill }, { now: later }),
		).toBe('recovering');
		expect(
			(
				await takeCrashed(store, {
					executionId: 'rec-2',
					limit: 50,
					maxAttempts: 3,
					leaseSeconds: 60,
				})
			).map((t) => t.eventId),
		).toContain('CFG-21');
	});

	it('a resumed run that failed or was stopped is parked with its class; one n8n kept no record of is done or parked as its save settings say', async () => {
		const failed = await waitFor('CFG-22');
		await settleWaitedExecution(
			store,
			failed.waiting,
			{ state: 'failed', canceled: false, message: 'CRM answered 422', step: 'Upsert Contact' },
			{ runLink: 'http://n8n.local/run' },
		);
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-22'))).toMatchObject([
			{ error_class: 'execution', error_message: 'CRM answered 422', step: 'Upsert Contact' },
		]);
		const stopped = await waitFor('CFG-23');
		await settleWaitedExecution(
			store,
			stopped.waiting,
			{
				state: 'failed',
				canceled: true,
				message: 'The execution was canceled',
				step: 'Upsert Contact',
			},
			{},
		);
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-23'))).toMatchObject([
			{ error_class: 'stopped' },
		]);
		const goneDone = await waitFor('CFG-24', 'done');
		// Asked once its wait was over (its record gone since: a success its workflow does not keep).
		const afterTheWait = new Date(Date.now() + 120_000);
		await settleWaitedExecution(store, goneDone.waiting, { state: 'gone' }, { now: afterTheWait });
		expect(await claimRow('CFG-24')).toMatchObject({ status: 'done' });
		const goneCheck = await waitFor('CFG-25', 'check');
		await settleWaitedExecution(store, goneCheck.waiting, { state: 'gone' }, { now: afterTheWait });
		const [check] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-25'));
		expect(check.error_message).toMatch(/no record .* check whether its work was done/);
	});

	it('a node after the Wait holds the claims again, and the resumed run’s own end settles them', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-26')]);
		await ended(run.executionId, 'waiting', { waitTill: new Date(Date.now() + 90_000) });
		expect(await claimRow('CFG-26')).toMatchObject({ waiting_till: expect.any(Date) });
		expect(await resumeExecutionClaims(store, run.executionId, 60)).toBe(1);
		expect(await claimRow('CFG-26')).toMatchObject({ waiting_till: null });
		await ended(run.executionId, 'success');
		expect(await claimRow('CFG-26')).toMatchObject({ status: 'done' });
	});
});

describe("a run stopped while its write's letter is open", () => {
	it("gives one open letter, the item's, naming the write's outcome; the write's letter points to it", async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-30')]);
		const [write] = await parkItems(store, [
			{
				workflowId: 'wf-orders',
				executionId: run.executionId,
				step: 'Create Contact',
				idempotencyKey: 'crm:CFG-30:create',
				integration: 'crm',
				errorClass: 'unknown_outcome',
				errorMessage: 'the response was lost after the request was sent',
				payload: { order: 'CFG-30' },
			},
		]);
		await ended(run.executionId, 'canceled', { step: 'Create Contact' });
		const [item] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-30'));
		expect(item).toMatchObject({
			error_class: 'stopped',
			step: 'Create Contact',
			integration: 'crm',
		});
		expect(item.already_happened).toContain('Create Contact: unknown_outcome');
		const [folded] = await lettersOf('crm:CFG-30:create');
		expect(folded).toMatchObject({ status: 'resolved' });
		expect(String(folded.id)).toBe(String((write as { id: string }).id));
		expect(folded.history.at(-1)?.reason).toContain(`folded into dead letter ${item.id}`);
	});

	it('a write letter already alerted is folded too: the item letter takes its issue, no second alert is due', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-32')]);
		// The worked example's path: the write's Failed output parked (a 422) and its Alert ran.
		const request = {
			workflowId: 'wf-orders',
			executionId: run.executionId,
			step: 'Upsert Contact',
			idempotencyKey: 'crm:CFG-32:upsert',
			integration: 'crm',
			errorClass: 'permanent',
			errorStatus: 422,
			errorMessage: 'phone: invalid format',
			payload: { order: 'CFG-32' },
		};
		const [write] = await parkItems(store, [request]);
		const writeId = String((write as { id: string }).id);
		await notifyAlerts(store, [{ ...request, deadLetterId: writeId }]);
		const [alerted] = await lettersOf('crm:CFG-32:upsert');
		expect(alerted.issue_id).not.toBeNull();
		// Then the run was stopped in the step after it.
		await ended(run.executionId, 'canceled', { step: 'Alert' });
		const open = [
			...(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-32'))),
			...(await openLettersOf('crm:CFG-32:upsert')),
		];
		expect(open).toHaveLength(1);
		expect(open[0]).toMatchObject({ error_class: 'stopped', step: 'Alert', integration: 'crm' });
		expect(String(open[0].issue_id)).toBe(String(alerted.issue_id));
		expect(open[0].already_happened).toContain('Upsert Contact: permanent');
		expect((await lettersOf('crm:CFG-32:upsert'))[0]).toMatchObject({ status: 'resolved' });
		// Neither the due alerts nor the sweep of unalerted letters names it again.
		const due = await takeDueAlerts(store, 100, 'wf-orders');
		expect(due.map((l) => String(l.id))).not.toContain(String(open[0].id));
		expect(
			await adminQuery(`SELECT alert_due FROM "${schema}".dead_letters WHERE id = $1`, [
				open[0].id,
			]),
		).toEqual([{ alert_due: null }]);
	});

	it('an item that fails at a second step while its letter is open keeps one letter, naming the newer step', async () => {
		const first = context();
		await claimEvents(store, first, [order('CFG-31')]);
		await ended(first.executionId, 'canceled', { step: 'Enrich' });
		const again = context();
		await claimEvents(store, again, [order('CFG-31')]);
		await ended(again.executionId, 'error', { step: 'Upsert Contact' });
		const open = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-31'));
		expect(open).toHaveLength(1);
		expect(open[0]).toMatchObject({ step: 'Upsert Contact', failure_count: 2 });
	});
});

describe('what a hostile review found, kept', () => {
	it('a wait with no end (a webhook or a form) is asked about every ten minutes, and one deleted before its end is parked', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-40')]);
		// n8n's "wait for a webhook call" waits until the year 3000.
		await ended(run.executionId, 'waiting', { waitTill: new Date('3000-01-01T00:00:00Z') });
		const [held] = await adminQuery<{ ask_in: number }>(
			`SELECT extract(epoch FROM ask_at - now())::int AS ask_in FROM "${schema}".processed_events WHERE event_id = 'CFG-40'`,
		);
		expect(held.ask_in).toBeLessThanOrEqual(600);
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second', ask_at = now() - interval '1 second' WHERE event_id = 'CFG-40'`,
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === run.executionId,
		);
		// A person deleted it while it waited: it never resumed, whatever its save settings say.
		await settleWaitedExecution(store, { ...waiting, checkIfGone: false }, { state: 'gone' }, {});
		const [letter] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-40'));
		expect(letter.error_message).toMatch(
			/its Wait was not over: it resumed early .* or a person deleted it while it waited: check/,
		);
	});

	it('claims released by Release (by execution or by event) are dropped by that rule: never swept, never parked by a later failure', async () => {
		const byExecution = context();
		await claimEvents(store, byExecution, [order('CFG-41')]);
		await releaseExecutionClaims(store, byExecution.executionId);
		const byEvent = context();
		await claimEvents(store, byEvent, [order('CFG-42')]);
		await releaseEvents(store, CONSUMER, ['CFG-42'], byEvent.executionId);
		// The run that released CFG-42 fails later.
		await ended(byEvent.executionId, 'error');
		await sweep();
		expect(await claimRow('CFG-41')).toMatchObject({ status: 'failed', settled_as: 'dropped' });
		expect(await claimRow('CFG-42')).toMatchObject({ status: 'failed', settled_as: 'dropped' });
		expect(await lettersOf(eventLetterKey(CONSUMER, 'CFG-41'))).toEqual([]);
		expect(await lettersOf(eventLetterKey(CONSUMER, 'CFG-42'))).toEqual([]);
	});

	it('a run from the editor that the person testing stops is dropped too, with no letter', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-43')]);
		await ended(run.executionId, 'canceled', { testRun: true });
		expect(await claimRow('CFG-43')).toMatchObject({ status: 'failed', settled_as: 'dropped' });
		expect(await lettersOf(eventLetterKey(CONSUMER, 'CFG-43'))).toEqual([]);
	});

	it('the sweep parks an item whose letter cannot keep all it knows (a node name too long for its column), and the others of its batch', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-44'), { ...order('CFG-45'), index: 1 }]);
		await settleExecutionClaims(store, run.executionId, {
			status: ExecutionEnd.error,
			message: 'ERP answered 500',
		});
		await adminQuery(
			`UPDATE "${schema}".processed_events SET failed_step = repeat('Post to ERP ', 100) WHERE event_id = 'CFG-44'`,
		);
		const swept = (await sweep()).map((s) => s.eventId);
		expect(swept).toEqual(expect.arrayContaining(['CFG-44', 'CFG-45']));
		const [long] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-44'));
		expect(long).toMatchObject({ step: 'unknown step' });
		expect(long.error_message).toMatch(/^ERP answered 500 \(the letter could not keep all it knew/);
		expect(await claimRow('CFG-44')).toMatchObject({ settled_as: 'parked' });
		expect(await claimRow('CFG-45')).toMatchObject({ settled_as: 'parked' });
	});

	it("a failed run that kept no items is its caller's item's failure once that item failed, or while Recover holds it; a caller still running may go on without it", async () => {
		// The caller's one item still runs: it may go on without the failed sub-workflow.
		const caller = context();
		await claimEvents(store, caller, [order('CFG-46')]);
		const whileRunning = await failExecution(store, {
			executionId: 'sub-run-of-CFG-46',
			crashed: false,
			callers: [caller.executionId],
		});
		expect(whileRunning).toMatchObject({ items: [], kept: 0, heldAbove: 0 });
		// The caller's item failed into its letter: the sub-workflow's failure is that item's.
		await ended(caller.executionId, 'error');
		const afterItFailed = await failExecution(store, {
			executionId: 'sub-run-of-CFG-46-late',
			crashed: false,
			callers: [caller.executionId],
		});
		expect(afterItFailed).toMatchObject({ items: [], kept: 0, heldAbove: 1 });
		// Recover's re-run of an item it holds: the item goes back to Recover.
		const died = context();
		await claimEvents(store, died, [order('CFG-47')]);
		await failExecution(store, { executionId: died.executionId, crashed: true });
		await takeCrashed(store, {
			executionId: 'recover-47',
			limit: 50,
			maxAttempts: 3,
			leaseSeconds: 60,
		});
		const rerun = await failExecution(store, {
			executionId: 'rerun-of-CFG-47',
			crashed: false,
			callers: ['recover-47'],
		});
		expect(rerun).toMatchObject({ items: [], kept: 0, heldAbove: 1 });
	});
});

describe('a run n8n lost while it waited (killed as it saved the wait: marked crashed, never resumed)', () => {
	it("is taken as crashed once its workflow's timeout has passed after the wait, and Recover runs it again", async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-50')]);
		const waitTill = new Date(Date.now() + 70_000);
		await ended(run.executionId, 'waiting', { waitTill, runLimitSeconds: 30 });
		await adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second', ask_at = now() - interval '1 second' WHERE event_id = 'CFG-50'`,
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === run.executionId,
		);
		expect(waiting.runLimitSeconds).toBe(30);
		// Its record still shows the wait: within the timeout (and n8n's minute to resume it), held.
		const record = { state: 'waiting' as const, waitTill };
		expect(
			await settleWaitedExecution(store, waiting, record, {
				now: new Date(waitTill.getTime() + 60_000),
			}),
		).toBe('held');
		expect(
			await settleWaitedExecution(store, waiting, record, {
				now: new Date(waitTill.getTime() + 150_000),
			}),
		).toBe('recovering');
		expect(
			(
				await takeCrashed(store, {
					executionId: 'rec-50',
					limit: 50,
					maxAttempts: 3,
					leaseSeconds: 60,
				})
			).map((t) => t.eventId),
		).toContain('CFG-50');
	});
});

describe('what a second hostile review found, kept', () => {
	const SUB = 'order-lines';

	it("a sub-workflow's claim under a caller holding two items stands on its own: never held by the other item", async () => {
		const caller = context();
		await claimEvents(store, caller, [order('CFG-60'), { ...order('CFG-61'), index: 1 }]);
		const child = { ...context(undefined, [caller.executionId]), consumer: SUB };
		await claimEvents(store, child, [order('CFG-60-line')]);
		await ended(child.executionId, 'error');
		// The caller goes on: it finishes CFG-60, and parks CFG-61 of its own.
		await completeEvents(store, CONSUMER, ['CFG-60'], caller.executionId);
		await ended(caller.executionId, 'error');
		await sweep();
		expect(await openLettersOf(eventLetterKey(SUB, 'CFG-60-line'))).toHaveLength(1);
		expect(await claimRow('CFG-60-line', SUB)).toMatchObject({ settled_as: 'parked' });
	});

	it('a claim taken again keeps nothing of what held it before (a release by an earlier worker): its failure is parked', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-62')]);
		// An earlier version's claim statement took a released claim again without clearing it.
		await adminQuery(
			`UPDATE "${schema}".processed_events SET settled_as = 'dropped' WHERE event_id = 'CFG-62'`,
		);
		await ended(run.executionId, 'error');
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-62'))).toHaveLength(1);
		expect(await claimRow('CFG-62')).toMatchObject({ settled_as: 'parked' });
	});

	it("a resumed run is held as long as its workflow's timeout, even past an hour", async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-64')]);
		const waitTill = new Date(Date.now() + 70_000);
		await ended(run.executionId, 'waiting', { waitTill, runLimitSeconds: 3 * 3600 });
		await adminQuery(
			`UPDATE "${schema}".processed_events SET ask_at = now() - interval '1 second' WHERE event_id = 'CFG-64'`,
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === run.executionId,
		);
		const at75Minutes = new Date(waitTill.getTime() + 75 * 60_000);
		expect(
			await settleWaitedExecution(
				store,
				waiting,
				{ state: 'waiting', waitTill },
				{ now: at75Minutes },
			),
		).toBe('held');
	});

	it('a waited run that failed at a node whose name its letter cannot hold is parked with what fits', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-65')]);
		await ended(run.executionId, 'waiting', { waitTill: new Date(Date.now() + 70_000) });
		await adminQuery(
			`UPDATE "${schema}".processed_events SET ask_at = now() - interval '1 second' WHERE event_id = 'CFG-65'`,
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === run.executionId,
		);
		await settleWaitedExecution(
			store,
			waiting,
			{ state: 'failed', canceled: false, message: 'the truck is full', step: 'Load '.repeat(100) },
			{},
		);
		const [letter] = await openLettersOf(eventLetterKey(CONSUMER, 'CFG-65'));
		expect(letter).toMatchObject({ step: 'unknown step' });
		expect(letter.error_message).toMatch(/^the truck is full/);
		expect(await claimRow('CFG-65')).toMatchObject({ status: 'failed', settled_as: 'parked' });
	});
});

describe("a sub-workflow that claims inside Recover's re-run of one of its items", () => {
	const SUB = 'order-lines';
	const lapse = (executions: string[]) =>
		adminQuery(
			`UPDATE "${schema}".processed_events SET lease_until = now() - interval '1 second' WHERE execution_id = ANY($1) AND status = 'in_progress'`,
			[executions],
		);
	/** One Recover run takes what lapsed. */
	const recoverAs = (executionId: string) =>
		takeCrashed(store, { executionId, limit: 50, maxAttempts: 3, leaseSeconds: 60 });
	/** The recovery run re-runs `eventId`, and the re-run returns waiting: it is handed the item. */
	const handedToWait = async (eventId: string, recovery: string) => {
		const rerun = `cfg-l${++n}`;
		await markRerun(store, { consumer: CONSUMER, eventId, executionId: recovery });
		await handRerunToWait(store, {
			consumer: CONSUMER,
			eventId,
			executionId: recovery,
			rerunExecution: rerun,
			waitTill: new Date(Date.now() + 70_000),
		});
		return rerun;
	};
	const crashedTwo = async (a: string, b: string) => {
		const runs = [context(), context()];
		await claimEvents(store, runs[0], [order(a)]);
		await claimEvents(store, runs[1], [order(b)]);
		await lapse(runs.map((r) => r.executionId));
		const recovery = `cfg-r${++n}`;
		await recoverAs(recovery);
		return recovery;
	};
	const child = (rerun: string, recovery: string) => ({
		...context(undefined, [rerun, recovery]),
		consumer: SUB,
	});

	it('n8n dying in it leaves the sub-workflow to the item: never re-run alone, one letter when the item is given up', async () => {
		const recovery = await crashedTwo('CFG-70', 'CFG-71');
		await markRerun(store, { consumer: CONSUMER, eventId: 'CFG-70', executionId: recovery });
		const sub = child(`cfg-l${++n}`, recovery);
		await claimEvents(store, sub, [order('CFG-70-line')]);
		await lapse([recovery, sub.executionId]);
		const next = await recoverAs(`cfg-r${++n}`);
		expect(next.map((t) => t.eventId).sort()).toEqual(['CFG-70', 'CFG-71']);
		expect(await claimRow('CFG-70-line', SUB)).toMatchObject({ status: 'in_progress' });
	});

	it("a sub-workflow the re-run did not wait for, claiming after Recover moved on, is its own item's, not the next one's", async () => {
		const recovery = await crashedTwo('CFG-72', 'CFG-73');
		const rerun = `cfg-l${++n}`;
		await markRerun(store, { consumer: CONSUMER, eventId: 'CFG-72', executionId: recovery });
		await recordRerun(store, {
			consumer: CONSUMER,
			eventId: 'CFG-72',
			executionId: recovery,
			rerunExecution: rerun,
		});
		await completeEvents(store, CONSUMER, ['CFG-72'], recovery);
		await markRerun(store, { consumer: CONSUMER, eventId: 'CFG-73', executionId: recovery });
		const late = child(rerun, recovery);
		await claimEvents(store, late, [order('CFG-72-line')]);
		await ended(late.executionId, 'error');
		await completeEvents(store, CONSUMER, ['CFG-73'], recovery);
		await sweep();
		// Its item went on without it: the failed sub-workflow has a letter of its own.
		expect(await openLettersOf(eventLetterKey(SUB, 'CFG-72-line'))).toHaveLength(1);
	});

	it('a re-run that finished without reaching the sub-workflow leaves the dead run’s sub-workflow claim covered, not re-run alone', async () => {
		const first = context();
		await claimEvents(store, first, [order('CFG-74')]);
		const sub = { ...context(undefined, [first.executionId]), consumer: SUB };
		await claimEvents(store, sub, [order('CFG-74-line')]);
		await lapse([first.executionId, sub.executionId]);
		const recovery = `cfg-r${++n}`;
		await recoverAs(recovery);
		await markRerun(store, { consumer: CONSUMER, eventId: 'CFG-74', executionId: recovery });
		await recordRerun(store, {
			consumer: CONSUMER,
			eventId: 'CFG-74',
			executionId: recovery,
			rerunExecution: `cfg-l${++n}`,
		});
		await completeEvents(store, CONSUMER, ['CFG-74'], recovery);
		const next = await recoverAs(`cfg-r${++n}`);
		expect(next.map((t) => t.eventId)).not.toContain('CFG-74-line');
		expect(await claimRow('CFG-74-line', SUB)).toMatchObject({ settled_as: 'covered' });
		expect(await openLettersOf(eventLetterKey(SUB, 'CFG-74-line'))).toHaveLength(0);
	});

	it('a re-run that returned waiting keeps the item until it ends: its failure after the Wait parks the item', async () => {
		const recovery = await crashedTwo('CFG-75', 'CFG-76');
		const rerun = await handedToWait('CFG-75', recovery);
		expect(await claimRow('CFG-75')).toMatchObject({ status: 'in_progress' });
		await adminQuery(
			`UPDATE "${schema}".processed_events SET ask_at = now() - interval '1 second' WHERE event_id = 'CFG-75'`,
		);
		const [waiting] = (await waitingExecutions(store, { limit: 50 })).filter(
			(w) => w.executionId === rerun,
		);
		await settleWaitedExecution(
			store,
			waiting,
			{ state: 'failed', canceled: false, message: 'the truck is full', step: 'Load' },
			{},
		);
		expect(await openLettersOf(eventLetterKey(CONSUMER, 'CFG-75'))).toHaveLength(1);
		expect(await claimRow('CFG-75')).toMatchObject({ status: 'failed', settled_as: 'parked' });
	});

	it('a recovery run that lost its item to another marks and records nothing over the other run’s re-run', async () => {
		const run = context();
		await claimEvents(store, run, [order('CFG-77')]);
		await lapse([run.executionId]);
		const slow = `cfg-r${++n}`;
		await recoverAs(slow);
		// The slow run stopped renewing: another recovery run takes the item and re-runs it.
		await lapse([slow]);
		const other = `cfg-r${++n}`;
		await recoverAs(other);
		const item = { consumer: CONSUMER, eventId: 'CFG-77' };
		expect(await markRerun(store, { ...item, executionId: other })).toBe(true);
		await recordRerun(store, { ...item, executionId: other, rerunExecution: 'cfg-l-other' });
		expect(await markRerun(store, { ...item, executionId: slow })).toBe(false);
		await recordRerun(store, { ...item, executionId: slow, rerunExecution: 'cfg-l-slow' });
		const [row] = await adminQuery<{ rerun_execution: string }>(
			`SELECT rerun_execution FROM "${schema}".processed_events WHERE consumer = $1 AND event_id = 'CFG-77'`,
			[CONSUMER],
		);
		expect(row.rerun_execution).toBe('cfg-l-other');
	});

	it('an item handed to its waiting re-run is that run’s: a failed sub-workflow of it that claims nothing is a record of the run', async () => {
		const recovery = await crashedTwo('CFG-78', 'CFG-79');
		const rerun = await handedToWait('CFG-78', recovery);
		const settled = await failExecution(store, {
			executionId: `cfg-s${++n}`,
			crashed: false,
			message: 'the lines did not add up',
			callers: [rerun, recovery],
		});
		expect(settled).toMatchObject({ items: [], kept: 0, heldAbove: 0 });
	});
});
