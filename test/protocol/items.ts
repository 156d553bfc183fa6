import fc from 'fast-check';
import { getDeadLettersByKey, OPEN_STATUSES, parkItems } from '../../lib/deadletter';
import {
	ClaimMode,
	claimEvents,
	completeEvents,
	failExecution,
	recordExecutionReport,
	releaseEvents,
	returnToRecovery,
	settleExecutionClaims,
	stopExecution,
	takeCrashed,
	ExecutionEnd,
} from '../../lib/dedupe';
import type { Store } from '../../lib/store';

/**
 * The item model: Event Dedupe's inbox through every way n8n ends an execution, with the actors
 * as n8n runs them: the end-of-execution hook (success, error, waiting is not modelled), a
 * cancel (Stop, a timeout, a worker's drain: the hook parks), a crash (no hook; n8n reports it
 * at its restart, and may report it again at the next), a queue-mode job n8n fails as stalled
 * while its worker still runs it (reported as a crash; the execution ends later, by its own
 * hook, and n8n reports nothing more), the bundled Error handler (Settle Failed
 * Execution, then Park), Recover (re-run, fail back, give up), Release by event (fenced), Check
 * Order, and senders that deliver again. Commands run one after another, each to its end, so a
 * schedule is exactly the interleaving it describes.
 *
 * The invariant is over items, checked on the state the schedule left, after n8n's restart
 * reports and Recover have had their time, and without delivering anything again: every
 * delivery ends done (its event's claim done), in an open (or person-closed) dead letter that
 * names its event, or dropped by a named rule (stale under Check Order). A done event has no open
 * letter, and no event is completed twice.
 */
type ItemCommand =
	| { kind: 'deliver'; event: number; version: number }
	| {
			kind: 'end';
			execution: number;
			how: 'success' | 'error' | 'crash' | 'cancel';
	  }
	/**
	 * n8n fails the nth running execution's queue job as stalled and owes a crash report for it,
	 * while its worker, only slow, goes on running it (it ends later by an `end`).
	 */
	| { kind: 'stall'; execution: number }
	/** n8n runs the Error handler for the nth report it owes (a crash: at its restart). */
	| { kind: 'report'; report: number }
	/** n8n reports a crashed execution again at its next restart. */
	| { kind: 'reportAgain'; report: number }
	/** A dead process's keeper stops renewing: the claims of the nth execution lapse. */
	| { kind: 'lapse'; execution: number }
	| { kind: 'recover'; rerun: 'success' | 'error' }
	/** Release by Event ID, run by the nth execution (fenced: only its own claims). */
	| { kind: 'release'; execution: number; event: number };

export interface ItemSchedule {
	checkOrder: boolean;
	commands: ItemCommand[];
}

/** The interleavings a run must reach at least once, or the run itself is a failure. */
export const REQUIRED_KINDS = [
	'cancel',
	'crash_reported_twice',
	'redelivery_after_failure',
	'check_order_retry',
	'recover_rerun',
	'recover_gave_up',
	'late_error_handler',
	'release_refused',
	'stalled_still_running',
] as const;
export type ReachedKind = (typeof REQUIRED_KINDS)[number];

const event = fc.integer({ min: 0, max: 2 });
const nth = fc.nat(5);
const itemCommand: fc.Arbitrary<ItemCommand> = fc.oneof(
	{
		weight: 8,
		arbitrary: fc.record({
			kind: fc.constant('deliver' as const),
			event,
			version: fc.integer({ min: 1, max: 3 }),
		}),
	},
	{
		weight: 8,
		arbitrary: fc.record({
			kind: fc.constant('end' as const),
			execution: nth,
			how: fc.constantFrom(
				'success' as const,
				'error' as const,
				'crash' as const,
				'cancel' as const,
			),
		}),
	},
	{ weight: 4, arbitrary: fc.record({ kind: fc.constant('report' as const), report: nth }) },
	{ weight: 4, arbitrary: fc.record({ kind: fc.constant('reportAgain' as const), report: nth }) },
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant('lapse' as const), execution: nth }) },
	{ weight: 2, arbitrary: fc.record({ kind: fc.constant('stall' as const), execution: nth }) },
	{
		weight: 3,
		arbitrary: fc.record({
			kind: fc.constant('recover' as const),
			rerun: fc.constantFrom('success' as const, 'error' as const),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({ kind: fc.constant('release' as const), execution: nth, event }),
	},
);

export const itemScheduleArbitrary: fc.Arbitrary<ItemSchedule> = fc.record({
	checkOrder: fc.boolean(),
	commands: fc.array(itemCommand, { minLength: 1, maxLength: 16 }),
});

interface Delivery {
	execution: string;
	eventId: string;
	/** Stale: dropped by Check Order's rule (older than, or the same version as, the entity's). */
	outcome: 'new' | 'duplicate' | 'stale';
	/** Its own execution released the claim (Release by Event ID): dropped by that rule. */
	released?: boolean;
}

interface Report {
	execution: string;
	crashed: boolean;
	/** How many times the Error handler has run for it. */
	runs: number;
	/** The events it held when it ended. */
	events: string[];
}

const MAX_RECOVERIES = 2;

export async function runItemSchedule(
	store: Store,
	schedule: ItemSchedule,
	id: string,
	reached: Map<ReachedKind, number>,
): Promise<string[]> {
	const violations: string[] = [];
	const consumer = `${id}-c`;
	const workflowId = `${id}-wf`;
	const eventName = (e: number) => `${id}-e${e}`;
	const deliveries: Delivery[] = [];
	/** Executions whose claims may still be settled by their end (one per new claim). */
	const running: string[] = [];
	/** Running executions n8n has already reported (failed as stalled): it reports them no more. */
	const stalled = new Set<string>();
	const owed: Report[] = [];
	const reported: Report[] = [];
	const failedEvents = new Set<string>();
	const completions = new Map<string, number>();
	let executions = 0;
	const reach = (kind: ReachedKind) => reached.set(kind, (reached.get(kind) ?? 0) + 1);

	const claimRow = async (eventId: string) =>
		(
			await store.query<{ status: string; execution_id: string; completed_by: string | null }>(
				`SELECT status, execution_id, completed_by FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = $2`,
				[consumer, eventId],
			)
		)[0];
	const heldBy = async (execution: string) =>
		(
			await store.query<{ event_id: string }>(
				`SELECT event_id FROM ${store.table('processed_events')} WHERE execution_id = $1 AND status = 'in_progress'`,
				[execution],
			)
		).map((row) => row.event_id);
	const completed = (eventIds: string[]) => {
		for (const eventId of eventIds) completions.set(eventId, (completions.get(eventId) ?? 0) + 1);
	};

	/** The bundled Error handler for one report: Settle Failed Execution, then Park. */
	const errorHandler = async (report: Report): Promise<void> => {
		report.runs++;
		for (const eventId of report.events) {
			const row = await claimRow(eventId);
			if (row && row.execution_id !== report.execution) reach('late_error_handler');
		}
		const settled = await failExecution(store, {
			executionId: report.execution,
			crashed: report.crashed,
			message: report.crashed ? 'Workflow did not finish' : 'Upstream service crashed',
		});
		if (settled.repeated) return;
		if (settled.items.length === 0 && settled.kept === 0) {
			// Park Failure: the execution-level letter, for executions whose items were not kept.
			await parkItems(store, [
				{
					workflowId,
					executionId: report.execution,
					step: 'Post to ERP',
					idempotencyKey: `execution:${report.execution}`,
					errorClass: 'execution',
					payload: {},
				},
			]);
		}
		if (settled.items.length > 0) {
			await parkItems(
				store,
				settled.items.map((item) => ({
					workflowId,
					executionId: report.execution,
					step: 'Post to ERP',
					idempotencyKey: `event:${item.consumer}:${item.eventId}`,
					errorClass: 'execution',
					payload: item.payload,
				})),
			);
		}
		await recordExecutionReport(store, report.execution, report.crashed ? 'crashed' : 'failed');
	};

	const act = async (command: ItemCommand): Promise<void> => {
		switch (command.kind) {
			case 'deliver': {
				const execution = `${id}-x${executions++}`;
				const eventId = eventName(command.event);
				const [result] = await claimEvents(
					store,
					{
						consumer,
						workflowId,
						executionId: execution,
						mode: ClaimMode.untilExecutionEnds,
						leaseSeconds: 600,
						retentionDays: 30,
					},
					[
						{
							index: 0,
							eventId,
							payload: { event: command.event, version: command.version },
							...(schedule.checkOrder
								? { entityKey: `${id}-entity`, version: String(command.version) }
								: {}),
						},
					],
				);
				deliveries.push({
					execution,
					eventId,
					// Under Check Order another event carrying the same version is a duplicate by rule.
					outcome:
						result.outcome === 'duplicate' && result.reason === 'same_version'
							? 'stale'
							: result.outcome,
				});
				if (result.outcome !== 'new') return;
				if (failedEvents.has(eventId)) {
					reach('redelivery_after_failure');
					if (schedule.checkOrder) reach('check_order_retry');
				}
				running.push(execution);
				return;
			}
			case 'end': {
				if (running.length === 0) return;
				const execution = running.splice(command.execution % running.length, 1)[0];
				const held = await heldBy(execution);
				const reportedAlready = stalled.delete(execution);
				if (reportedAlready && command.how !== 'crash') reach('stalled_still_running');
				switch (command.how) {
					case 'success':
						await settleExecutionClaims(store, execution, { status: ExecutionEnd.success });
						completed(held);
						return;
					case 'error':
						await settleExecutionClaims(store, execution, {
							status: ExecutionEnd.error,
							message: 'Upstream service crashed',
						});
						for (const eventId of held) failedEvents.add(eventId);
						if (!reportedAlready) owed.push({ execution, crashed: false, runs: 0, events: held });
						return;
					case 'crash':
						for (const eventId of held) failedEvents.add(eventId);
						if (!reportedAlready) owed.push({ execution, crashed: true, runs: 0, events: held });
						return;
					case 'cancel':
						reach('cancel');
						await stopExecution(store, { executionId: execution, workflowId, step: 'Post' });
						for (const eventId of held) failedEvents.add(eventId);
						return;
				}
				return;
			}
			case 'stall': {
				const candidates = running.filter((e) => !stalled.has(e));
				if (candidates.length === 0) return;
				const execution = candidates[command.execution % candidates.length];
				stalled.add(execution);
				owed.push({ execution, crashed: true, runs: 0, events: await heldBy(execution) });
				return;
			}
			case 'report': {
				if (owed.length === 0) return;
				const report = owed.splice(command.report % owed.length, 1)[0];
				await errorHandler(report);
				if (report.crashed) reported.push(report);
				return;
			}
			case 'reportAgain': {
				if (reported.length === 0) return;
				const report = reported[command.report % reported.length];
				reach('crash_reported_twice');
				await errorHandler(report);
				return;
			}
			case 'lapse': {
				if (running.length === 0) return;
				// The process died without n8n noticing (a queue-mode worker): its claims lapse.
				const execution = running.splice(command.execution % running.length, 1)[0];
				stalled.delete(execution);
				await store.query(
					`UPDATE ${store.table('processed_events')} SET lease_until = now() - interval '1 second' WHERE execution_id = $1 AND status = 'in_progress'`,
					[execution],
				);
				return;
			}
			case 'recover':
				await recover(command.rerun);
				return;
			case 'release': {
				// A running execution releases (its own claim, or another's: refused); a dead one runs nothing.
				if (running.length === 0) return;
				const execution = running[command.execution % running.length];
				const eventId = eventName(command.event);
				const before = await claimRow(eventId);
				const released = await releaseEvents(store, consumer, [eventId], execution);
				if (before?.status === 'in_progress' && before.execution_id !== execution)
					reach('release_refused');
				if (released.length > 0) {
					// Its own claim, released: that execution gives the event up for a redelivery.
					for (const delivery of deliveries)
						if (delivery.execution === execution && delivery.eventId === eventId)
							delivery.released = true;
					const at = running.indexOf(execution);
					if (at >= 0) running.splice(at, 1);
					failedEvents.add(eventId);
				}
				return;
			}
		}
	};

	/** One Recover run: re-runs finish (complete) or throw (back to Recover); past the cap, parked. */
	const recover = async (rerun: 'success' | 'error'): Promise<number> => {
		const execution = `${id}-r${executions++}`;
		const taken = await takeCrashed(store, {
			executionId: execution,
			limit: 10,
			maxAttempts: MAX_RECOVERIES,
			leaseSeconds: 600,
			workflowId,
		});
		for (const item of taken.filter((t) => !t.givenUp)) {
			reach('recover_rerun');
			if (rerun === 'success') {
				const [done] = await completeEvents(store, consumer, [item.eventId], execution);
				if (done.changed) completed([item.eventId]);
			} else {
				await returnToRecovery(store, {
					consumer,
					eventId: item.eventId,
					executionId: execution,
					message: 'the re-run failed',
				});
			}
		}
		const givenUp = taken.filter((t) => t.givenUp);
		if (givenUp.length > 0) {
			reach('recover_gave_up');
			await parkItems(
				store,
				givenUp.map((item) => ({
					workflowId,
					executionId: item.originExecutionId ?? undefined,
					step: 'crashed',
					idempotencyKey: `event:${item.consumer}:${item.eventId}`,
					errorClass: 'crashed',
					payload: item.payload,
				})),
			);
		}
		return taken.length;
	};

	for (const command of schedule.commands) await act(command);

	// The world after the schedule, without any delivery: n8n dies with what still runs and
	// reports every crash at its restart, the Error handler runs for each report it owes, and
	// Recover runs until it has nothing left (re-runs that fail, then succeed, then give up).
	for (const execution of running.splice(0))
		if (!stalled.has(execution))
			owed.push({ execution, crashed: true, runs: 0, events: await heldBy(execution) });
	for (const report of owed.splice(0)) await errorHandler(report);
	for (let round = 0; round < MAX_RECOVERIES + 3; round++)
		if ((await recover(round % 2 === 0 ? 'error' : 'success')) === 0) break;

	// The check, per delivery.
	const letters = await getDeadLettersByKey(
		store,
		[0, 1, 2].map((e) => `event:${consumer}:${eventName(e)}`),
	);
	const personClosed = ['resolved', 'abandoned', 'compensated'];
	for (const [n, delivery] of deliveries.entries()) {
		if (delivery.outcome === 'stale' || delivery.released) continue;
		const row = await claimRow(delivery.eventId);
		// Its event's claim was released by the execution that held it: dropped by that rule (the
		// claim is failed with the item kept, for a redelivery).
		if (
			row?.status !== 'in_progress' &&
			deliveries.some((d) => d.eventId === delivery.eventId && d.released)
		)
			continue;
		const mine = letters.filter(
			(l) => l.idempotency_key === `event:${consumer}:${delivery.eventId}`,
		);
		const open = mine.filter(
			(l) => OPEN_STATUSES.includes(l.status as never) || personClosed.includes(String(l.status)),
		);
		if (row?.status === 'done') continue;
		if (open.length > 0) continue;
		violations.push(
			`delivery ${n} (${delivery.execution}, event ${delivery.eventId}, ${delivery.outcome}) is silently gone: claim ${row ? `${row.status} by ${row.execution_id}` : 'absent'}, no open letter`,
		);
	}
	for (const e of [0, 1, 2]) {
		const eventId = eventName(e);
		const row = await claimRow(eventId);
		const open = letters.filter(
			(l) =>
				l.idempotency_key === `event:${consumer}:${eventId}` &&
				['new', 'held', 'replay_requested'].includes(String(l.status)),
		);
		// Dropped by Check Order's rule: a letter of an earlier delivery stays for a person.
		if (row?.status === 'done' && row.completed_by !== 'ordering' && open.length > 0)
			violations.push(`event ${eventId} is done but ${open.length} letter(s) of it are still open`);
		if (row?.status === 'in_progress')
			violations.push(`event ${eventId} is still in progress after Recover had its time`);
		if ((completions.get(eventId) ?? 0) > 1)
			violations.push(`event ${eventId} was completed ${completions.get(eventId)} times`);
	}
	const execLetters = await store.query<{ n: number }>(
		`SELECT count(*)::int AS n FROM ${store.table('dead_letters')} WHERE workflow_id = $1 AND idempotency_key LIKE 'execution:%'`,
		[workflowId],
	);
	if (execLetters[0].n > 0)
		violations.push(`${execLetters[0].n} execution-level letter(s) for items the inbox kept`);
	return violations;
}
