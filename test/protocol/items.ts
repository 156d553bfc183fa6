import fc from 'fast-check';
import { type ParkRequest, parkItems, takeDueAlerts } from '../../lib/deadletter';
import {
	ClaimMode,
	claimEvents,
	completeEvents,
	failExecution,
	parkKeptItems,
	parkUnsettledClaims,
	releaseEvents,
	resumeExecutionClaims,
	markRerun,
	recordRerun,
	returnToRecovery,
	settleExecutionEnd,
	settleWaitedExecution,
	takeCrashed,
	type WaitedExecution,
	waitingExecutions,
} from '../../lib/dedupe';
import type { Store } from '../../lib/store';
import { checkItemWorld, type ItemWorld } from './itemInvariants';
import { notifyAlerts } from '../../lib/alerts';

/**
 * The item model: Event Dedupe's inbox through every way n8n ends an execution, under every
 * configuration a user may have, with the actors as n8n runs them: the end-of-execution hook
 * (success, error, a wait), a cancel (Stop, a timeout, a worker's drain: the hook parks), a crash
 * (no hook; n8n reports it at its restart, and may report it again at the next), a queue-mode job
 * n8n fails as stalled while its worker still runs it, the error workflow the workflow names (the
 * bundled Error handler: Settle Failed Execution, then Park, maybe racing the hook or dying
 * half-way; one of the user's that only posts to a chat; none), a Wait that n8n offloads and
 * resumes in a new process with new hooks (a node of the package after the Wait attaches the
 * hook again, or none does and Recover asks n8n's record), a sub-workflow that claims under a
 * claiming parent (its error propagated, or the parent going on), a write that parked its own
 * letter before the run ended, Recover (re-run, fail back, give up, the sweep of failed claims
 * nothing holds, the executions that waited), Release by event (fenced), Check Order, and
 * senders that deliver again. Commands run one after another, each to its end, so a schedule is
 * exactly the interleaving it describes.
 *
 * The invariants are over items, checked on the state the schedule left, after time passed,
 * n8n's restart reports and Recover have had their time, and without delivering anything again
 * (itemInvariants.ts).
 */
type ItemCommand =
	| { kind: 'deliver'; event: number; version: number }
	| {
			kind: 'end';
			execution: number;
			how: 'success' | 'error' | 'crash' | 'cancel';
			/** The error workflow n8n starts runs before the execution's own end-of-execution hook. */
			handlerFirst?: boolean;
	  }
	/**
	 * n8n fails the nth running execution's queue job as stalled and owes a crash report for it,
	 * while its worker, only slow, goes on running it (it ends later by an `end`).
	 */
	| { kind: 'stall'; execution: number }
	/** n8n runs the error workflow for the nth report it owes (a crash: at its restart). */
	| {
			kind: 'report';
			report: number;
			/** The Error handler's run dies after Settle Failed Execution, before its Park. */
			dies?: boolean;
	  }
	/** n8n reports a crashed execution again at its next restart. */
	| { kind: 'reportAgain'; report: number }
	/** A dead process's keeper stops renewing: the claims of the nth execution lapse. */
	| { kind: 'lapse'; execution: number }
	/**
	 * One Recover run; `skip`: its re-runs succeed without calling the sub-workflow (a branch, an
	 * edited workflow); `crash`: n8n dies while the run's first re-run is inside the sub-workflow
	 * it calls (the run, the re-run and the sub-workflow's execution all die).
	 */
	| { kind: 'recover'; rerun: Rerun }
	/** Release by Event ID, run by the nth execution (fenced: only its own claims). */
	| { kind: 'release'; execution: number; event: number }
	/** The nth running execution reaches a Wait over n8n's offload threshold: saved as waiting. */
	| { kind: 'wait'; execution: number }
	/**
	 * The nth waiting execution resumes (in a new process, with new hooks) and ends `how`; with
	 * `attached`, a node of the package runs after the Wait and attaches the hook again.
	 */
	| {
			kind: 'resume';
			execution: number;
			how: 'success' | 'error' | 'cancel' | 'crash';
			attached: boolean;
	  }
	/**
	 * The nth running execution calls a sub-workflow that claims the item's sub-event and ends
	 * `how`; a failure propagates to the caller (which then fails), unless the caller goes on
	 * (Continue On Fail on its Execute Workflow node).
	 */
	| {
			kind: 'sub';
			execution: number;
			/** `crash`: n8n dies while the sub-workflow runs, with its caller. */
			how: 'success' | 'error' | 'cancel' | 'crash';
			propagate: boolean;
	  }
	/** A write step of the nth running execution parks its own letter (an outcome unknown). */
	| { kind: 'writeParks'; execution: number; alerted?: boolean }
	/** Time passes: the holds of waiting executions run out. */
	| { kind: 'time' };

type ErrorWorkflow = 'bundled' | 'own' | 'none';
type Rerun = 'success' | 'skip' | 'error' | 'crash';

export interface ItemSchedule {
	checkOrder: boolean;
	/**
	 * The error workflow the user's workflow names: the bundled Error handler (the default), one
	 * of the user's own that only posts to a chat, or none.
	 */
	errorWorkflow?: ErrorWorkflow;
	/** What n8n saves of an ended execution: every run (the default), failures only, nothing. */
	saves?: 'all' | 'errorsOnly' | 'none';
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
	'recover_rerun_crashed',
	'late_error_handler',
	'release_refused',
	'stalled_still_running',
	'own_error_workflow',
	'no_error_workflow',
	'error_handler_before_hook',
	'error_handler_died',
	'wait_resumed_attached',
	'wait_resumed_unattached',
	'resumed_run_failed',
	'gone_after_wait',
	'sub_workflow_held_above',
	'sub_workflow_alone',
	'sub_workflow_crashed',
	'write_letter_folded',
	'alerted_write_letter_folded',
] as const;
export type ReachedKind = (typeof REQUIRED_KINDS)[number];

const event = fc.integer({ min: 0, max: 2 });
const nth = fc.nat(5);
/** A command kind, or a narrower draw of one: a crash, a resume with no hook attached. */
type Kind = ItemCommand['kind'] | 'crash' | 'resumeUnhooked';

/** One generator per command kind (and per narrower draw). */
const commandOf: Record<Kind, fc.Arbitrary<ItemCommand>> = {
	crash: fc.record({
		kind: fc.constant('end' as const),
		execution: nth,
		how: fc.constant('crash' as const),
	}),
	resumeUnhooked: fc.record({
		kind: fc.constant('resume' as const),
		execution: nth,
		how: fc.constantFrom('success' as const, 'error' as const, 'cancel' as const),
		attached: fc.constant(false),
	}),
	deliver: fc.record({
		kind: fc.constant('deliver' as const),
		event,
		version: fc.integer({ min: 1, max: 3 }),
	}),
	end: fc.record({
		kind: fc.constant('end' as const),
		execution: nth,
		how: fc.constantFrom('success' as const, 'error' as const, 'crash' as const, 'cancel' as const),
		handlerFirst: fc.boolean(),
	}),
	stall: fc.record({ kind: fc.constant('stall' as const), execution: nth }),
	report: fc.record({
		kind: fc.constant('report' as const),
		report: nth,
		dies: fc.oneof(
			{ weight: 4, arbitrary: fc.constant(false) },
			{ weight: 1, arbitrary: fc.constant(true) },
		),
	}),
	reportAgain: fc.record({ kind: fc.constant('reportAgain' as const), report: nth }),
	lapse: fc.record({ kind: fc.constant('lapse' as const), execution: nth }),
	recover: fc.record({
		kind: fc.constant('recover' as const),
		rerun: fc.constantFrom<Rerun>('success', 'skip', 'error', 'crash'),
	}),
	release: fc.record({ kind: fc.constant('release' as const), execution: nth, event }),
	wait: fc.record({ kind: fc.constant('wait' as const), execution: nth }),
	resume: fc.record({
		kind: fc.constant('resume' as const),
		execution: nth,
		how: fc.constantFrom('success' as const, 'error' as const, 'cancel' as const, 'crash' as const),
		attached: fc.boolean(),
	}),
	sub: fc.record({
		kind: fc.constant('sub' as const),
		execution: nth,
		how: fc.constantFrom('success' as const, 'error' as const, 'cancel' as const, 'crash' as const),
		propagate: fc.boolean(),
	}),
	// alerted: the write's Failed output went on to the Alert workflow (the worked example's path).
	writeParks: fc.record({
		kind: fc.constant('writeParks' as const),
		execution: nth,
		alerted: fc.boolean(),
	}),
	time: fc.record({ kind: fc.constant('time' as const) }),
};

/** Commands drawn with these weights (a kind left out is never drawn). */
const commandsWeighted = (weights: Partial<Record<Kind, number>>): fc.Arbitrary<ItemCommand[]> =>
	fc.array(
		fc.oneof(
			...Object.entries(weights).map(([kind, weight]) => ({
				weight: weight!,
				arbitrary: commandOf[kind as Kind],
			})),
		),
		{ minLength: 1, maxLength: 16 },
	);

/** A family of schedules: the weights of its commands and of the configurations it meets. */
interface Family {
	commands: Partial<Record<Kind, number>>;
	errorWorkflow: Record<ErrorWorkflow, number>;
	saves: Record<NonNullable<ItemSchedule['saves']>, number>;
}

const weighted = <T extends string>(weights: Record<T, number>): fc.Arbitrary<T> =>
	fc.oneof(
		...Object.entries(weights).map(([value, weight]) => ({
			weight: weight as number,
			arbitrary: fc.constant(value as T),
		})),
	);

/**
 * Schedules come in families, each with the weights that reach its endings often: n8n's
 * lifecycle (crashes reported once and again, stalls, releases), the bundled Error handler's
 * reports (racing the hook, dying half-way), the user's configuration (their own error workflow
 * or none, sub-workflows, write letters), and waits (resumed with and without the hook, records
 * n8n kept or not). Each family draws the others' commands too, and meets every configuration.
 */
const FAMILIES: Family[] = [
	{
		commands: {
			deliver: 8,
			end: 6,
			crash: 4,
			report: 6,
			reportAgain: 6,
			lapse: 2,
			stall: 2,
			recover: 5,
			release: 5,
			sub: 1,
		},
		errorWorkflow: { bundled: 6, own: 1, none: 1 },
		saves: { all: 1, errorsOnly: 0, none: 0 },
	},
	{
		commands: {
			deliver: 8,
			end: 10,
			report: 8,
			reportAgain: 2,
			stall: 2,
			recover: 3,
			writeParks: 2,
			sub: 2,
		},
		errorWorkflow: { bundled: 6, own: 1, none: 1 },
		saves: { all: 2, errorsOnly: 1, none: 1 },
	},
	{
		commands: {
			deliver: 8,
			end: 8,
			report: 3,
			recover: 3,
			sub: 5,
			writeParks: 4,
			release: 1,
			lapse: 1,
			wait: 1,
		},
		errorWorkflow: { bundled: 2, own: 2, none: 2 },
		saves: { all: 2, errorsOnly: 1, none: 1 },
	},
	{
		commands: {
			deliver: 6,
			end: 4,
			report: 2,
			recover: 3,
			wait: 6,
			resume: 4,
			resumeUnhooked: 4,
			time: 2,
			writeParks: 1,
			sub: 1,
		},
		errorWorkflow: { bundled: 2, own: 1, none: 1 },
		saves: { all: 1, errorsOnly: 2, none: 2 },
	},
];

const scheduleOf = (family: Family): fc.Arbitrary<ItemSchedule> =>
	fc.record({
		checkOrder: fc.boolean(),
		errorWorkflow: weighted(family.errorWorkflow),
		saves: weighted(
			Object.fromEntries(Object.entries(family.saves).filter(([, w]) => w > 0)) as Family['saves'],
		),
		commands: commandsWeighted(family.commands),
	});

/** n8n's lifecycle most often: its endings are the rarest to reach. */
const FAMILY_WEIGHTS = [3, 2, 2, 2];

export const itemScheduleArbitrary: fc.Arbitrary<ItemSchedule> = fc.oneof(
	...FAMILIES.map((family, i) => ({ weight: FAMILY_WEIGHTS[i], arbitrary: scheduleOf(family) })),
);

/** A delivery the model made: a root event's, or a sub-workflow's claim under one. */
export interface Delivery {
	execution: string;
	eventId: string;
	/** The consumer that claimed it (the workflow's, or the sub-workflow's). */
	consumer: string;
	/** The root event: the item this delivery is part of. */
	item: string;
	/** Stale: dropped by Check Order's rule (older than, or the same version as, the entity's). */
	outcome: 'new' | 'duplicate' | 'stale';
	/** Its own execution released the claim (Release by Event ID): dropped by that rule. */
	released?: boolean;
}

/** A report n8n owes for an ended execution: its error workflow runs for it. */
interface Report {
	execution: string;
	crashed: boolean;
	/** How many times the error workflow has run for it. */
	runs: number;
	/** The events it held when it ended. */
	events: string[];
}

/** A top-level execution of the workflow: one delivery of its item. */
interface Run {
	id: string;
	/** The root event it delivers. */
	item: string;
}

const MAX_RECOVERIES = 2;
/** Time enough for any hold and bound to run out (Recover's view of "later"). */
const LATER_MS = 2 * 3600_000;

export async function runItemSchedule(
	store: Store,
	schedule: ItemSchedule,
	id: string,
	reached: Map<ReachedKind, number>,
): Promise<string[]> {
	const errorWorkflow = schedule.errorWorkflow ?? 'bundled';
	const saves = schedule.saves ?? 'all';
	const world: ItemWorld = {
		consumer: `${id}-c`,
		subConsumer: `${id}-sub`,
		workflowId: `${id}-wf`,
		items: [0, 1, 2].map((e) => `${id}-e${e}`),
		deliveries: [],
		completions: new Map(),
		alerts: new Map(),
		refused: [],
	};
	const { consumer, subConsumer, workflowId } = world;
	const eventName = (e: number) => world.items[e];
	const subEventOf = (item: string) => `${item}-sub`;
	/** Executions whose claims may still be settled by their end (one per new claim). */
	const running: Run[] = [];
	/** Executions saved as waiting (a Wait n8n offloaded), with what n8n's record says of each. */
	const waiting: Run[] = [];
	const records = new Map<string, WaitedExecution>();
	/** Running executions n8n has already reported (failed as stalled): it reports them no more. */
	const stalled = new Set<string>();
	const owed: Report[] = [];
	const reported: Report[] = [];
	const failedEvents = new Set<string>();
	let executions = 0;
	const reach = (kind: ReachedKind) => reached.set(kind, (reached.get(kind) ?? 0) + 1);

	const claimRow = async (eventId: string, of = consumer) =>
		(
			await store.query<{ status: string; execution_id: string; completed_by: string | null }>(
				`SELECT status, execution_id, completed_by FROM ${store.table('processed_events')} WHERE consumer = $1 AND event_id = $2`,
				[of, eventId],
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
		for (const eventId of eventIds)
			world.completions.set(eventId, (world.completions.get(eventId) ?? 0) + 1);
	};
	const alerted = (ids: Array<string | number>) => {
		for (const letter of ids)
			world.alerts.set(String(letter), (world.alerts.get(String(letter)) ?? 0) + 1);
	};
	const take = (list: Run[], n: number): Run | undefined =>
		list.length === 0 ? undefined : list.splice(n % list.length, 1)[0];

	/** The end-of-execution hook, as n8n runs it in the process that ran the execution. */
	const hook = async (
		execution: string,
		status: 'success' | 'error' | 'canceled' | 'waiting',
		waitTill?: Date,
	) =>
		await settleExecutionEnd(store, {
			executionId: execution,
			status,
			workflowId,
			step: 'Post to ERP',
			reason: status === 'error' ? 'Upstream service crashed' : undefined,
			waitTill,
			leaseSeconds: 600,
			errorWorkflowNamed: errorWorkflow !== 'none',
			ifGone: saves === 'errorsOnly' ? 'done' : 'check',
		});

	/** What n8n's record of an ended execution says, after its workflow's save settings. */
	const recordOf = (how: 'success' | 'error' | 'cancel'): WaitedExecution =>
		how === 'success'
			? saves === 'all'
				? { state: 'success' }
				: { state: 'gone' }
			: saves === 'none'
				? { state: 'gone' }
				: {
						state: 'failed',
						canceled: how === 'cancel',
						message: how === 'cancel' ? 'The execution was canceled' : 'Upstream service crashed',
						step: 'Post to ERP',
					};

	/** n8n runs the workflow's error workflow for a failed or crashed execution. */
	const errorWorkflowFor = async (report: Report, at: 'owed' | 'now'): Promise<void> => {
		if (errorWorkflow === 'own') reach('own_error_workflow');
		if (errorWorkflow !== 'bundled') return; // a chat post, or nothing: parks nothing
		if (at === 'now') await errorHandler(report, false);
		else owed.push(report);
	};

	/** The bundled Error handler for one report: Settle Failed Execution, then Park. */
	const errorHandler = async (report: Report, dies: boolean): Promise<void> => {
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
		if (dies) {
			reach('error_handler_died');
			return;
		}
		if (settled.items.length === 0 && settled.kept === 0 && settled.heldAbove === 0) {
			// Park Failure: the execution-level letter, for executions whose items were not kept.
			const [letter] = await parkItems(store, [
				{
					workflowId,
					executionId: report.execution,
					step: 'Post to ERP',
					idempotencyKey: `execution:${report.execution}`,
					errorClass: 'execution',
					payload: {},
				},
			]);
			if (!letter.refused) alerted([letter.id]);
		}
		if (settled.items.length > 0) {
			const letters = await parkKeptItems(
				store,
				settled.items.map((item): ParkRequest => ({
					workflowId,
					executionId: report.execution,
					step: 'Post to ERP',
					idempotencyKey: `event:${item.consumer}:${item.eventId}`,
					businessId: item.eventId,
					errorClass: 'execution',
					payload: item.payload,
				})),
				{ executionId: report.execution, claims: settled.items },
			);
			// Settle Failed Execution leaves out of its Alert what an earlier alert named.
			alerted(letters.filter((l) => !l.alreadyAlerted).map((letter) => letter.id));
		}
	};

	/** A run ends with an error: its hook, and n8n's error workflow (maybe before the hook). */
	const failRun = async (run: Run, handlerFirst: boolean, reportedAlready = false) => {
		const held = await heldBy(run.id);
		for (const eventId of held) failedEvents.add(eventId);
		const report: Report = { execution: run.id, crashed: false, runs: 0, events: held };
		if (errorWorkflow === 'none') reach('no_error_workflow');
		if (handlerFirst && errorWorkflow === 'bundled' && !reportedAlready) {
			reach('error_handler_before_hook');
			await errorWorkflowFor(report, 'now');
			await hook(run.id, 'error');
			return;
		}
		await hook(run.id, 'error');
		if (!reportedAlready) await errorWorkflowFor(report, 'owed');
	};

	const deliver = async (command: { event: number; version: number }) => {
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
		world.deliveries.push({
			execution,
			eventId,
			consumer,
			item: eventId,
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
		running.push({ id: execution, item: eventId });
	};

	/**
	 * A sub-workflow call of `caller` (an execution that holds `item`, or Recover's re-run of it):
	 * claims the item's sub-event, with the callers n8n gives (the caller, and its own caller).
	 */
	const callSub = async (
		caller: string,
		item: string,
		callers: string[] = [caller],
	): Promise<{ execution: string; claimed: boolean }> => {
		const execution = `${caller}-s${executions++}`;
		const eventId = subEventOf(item);
		const [result] = await claimEvents(
			store,
			{
				consumer: subConsumer,
				workflowId,
				executionId: execution,
				mode: ClaimMode.untilExecutionEnds,
				leaseSeconds: 600,
				retentionDays: 30,
				ancestors: callers,
			},
			[{ index: 0, eventId, payload: { sub: item } }],
		);
		world.deliveries.push({
			execution,
			eventId,
			consumer: subConsumer,
			item,
			outcome: result.outcome === 'new' ? 'new' : 'duplicate',
		});
		return { execution, claimed: result.outcome === 'new' };
	};

	const act = async (command: ItemCommand): Promise<void> => {
		switch (command.kind) {
			case 'deliver':
				return await deliver(command);
			case 'end': {
				const run = take(running, command.execution);
				if (!run) return;
				const reportedAlready = stalled.delete(run.id);
				if (reportedAlready && command.how !== 'crash') reach('stalled_still_running');
				switch (command.how) {
					case 'success':
						completed(await heldBy(run.id));
						await hook(run.id, 'success');
						return;
					case 'error':
						await failRun(run, command.handlerFirst === true, reportedAlready);
						return;
					case 'crash': {
						const held = await heldBy(run.id);
						for (const eventId of held) failedEvents.add(eventId);
						if (!reportedAlready)
							await errorWorkflowFor(
								{ execution: run.id, crashed: true, runs: 0, events: held },
								'owed',
							);
						return;
					}
					case 'cancel':
						reach('cancel');
						for (const eventId of await heldBy(run.id)) failedEvents.add(eventId);
						await hook(run.id, 'canceled');
						return;
				}
				return;
			}
			case 'stall': {
				const candidates = running.filter((r) => !stalled.has(r.id));
				if (candidates.length === 0) return;
				const run = candidates[command.execution % candidates.length];
				stalled.add(run.id);
				await errorWorkflowFor(
					{ execution: run.id, crashed: true, runs: 0, events: await heldBy(run.id) },
					'owed',
				);
				return;
			}
			case 'report': {
				if (owed.length === 0) return;
				const report = owed.splice(command.report % owed.length, 1)[0];
				await errorHandler(report, command.dies === true);
				if (report.crashed) reported.push(report);
				return;
			}
			case 'reportAgain': {
				if (reported.length === 0) return;
				const report = reported[command.report % reported.length];
				reach('crash_reported_twice');
				await errorHandler(report, false);
				return;
			}
			case 'lapse': {
				// The process died without n8n noticing (a queue-mode worker): its claims lapse.
				const run = take(running, command.execution);
				if (!run) return;
				stalled.delete(run.id);
				await store.query(
					`UPDATE ${store.table('processed_events')} SET lease_until = now() - interval '1 second' WHERE execution_id = $1 AND status = 'in_progress'`,
					[run.id],
				);
				return;
			}
			case 'recover':
				await recover(command.rerun);
				return;
			case 'release': {
				// A running execution releases (its own claim, or another's: refused); a dead one runs nothing.
				if (running.length === 0) return;
				const run = running[command.execution % running.length];
				const eventId = eventName(command.event);
				const before = await claimRow(eventId);
				const released = await releaseEvents(store, consumer, [eventId], run.id);
				if (before?.status === 'in_progress' && before.execution_id !== run.id)
					reach('release_refused');
				if (released.length > 0) {
					// Its own claim, released: that execution gives the event up for a redelivery.
					for (const delivery of world.deliveries)
						if (delivery.execution === run.id && delivery.eventId === eventId)
							delivery.released = true;
					running.splice(running.indexOf(run), 1);
					failedEvents.add(eventId);
				}
				return;
			}
			case 'wait': {
				const candidates = running.filter((r) => !stalled.has(r.id));
				if (candidates.length === 0) return;
				const run = candidates[command.execution % candidates.length];
				running.splice(running.indexOf(run), 1);
				const waitTill = new Date(Date.now() + 90_000);
				await hook(run.id, 'waiting', waitTill);
				records.set(run.id, { state: 'waiting', waitTill });
				waiting.push(run);
				return;
			}
			case 'resume':
				await resume(command);
				return;
			case 'sub': {
				const candidates = running.filter((r) => !stalled.has(r.id));
				if (candidates.length === 0) return;
				const run = candidates[command.execution % candidates.length];
				const sub = await callSub(run.id, run.item);
				if (!sub.claimed || command.how === 'success') {
					if (sub.claimed) completed(await heldBy(sub.execution));
					if (sub.claimed) await hook(sub.execution, 'success');
					return;
				}
				if (command.how === 'crash') {
					// n8n dies with both: no hook runs; n8n reports the caller crashed at its restart.
					reach('sub_workflow_crashed');
					running.splice(running.indexOf(run), 1);
					const held = await heldBy(run.id);
					for (const eventId of [...held, subEventOf(run.item)]) failedEvents.add(eventId);
					await errorWorkflowFor(
						{ execution: run.id, crashed: true, runs: 0, events: held },
						'owed',
					);
					return;
				}
				if (command.how === 'cancel') {
					// A Stop cancels the whole run: the sub-workflow's and its caller's hooks both run.
					reach('cancel');
					await hook(sub.execution, 'canceled');
					running.splice(running.indexOf(run), 1);
					for (const eventId of await heldBy(run.id)) failedEvents.add(eventId);
					await hook(run.id, 'canceled');
					return;
				}
				// The sub-workflow failed: its own hook and error workflow (n8n runs both for it).
				failedEvents.add(subEventOf(run.item));
				await failRun({ id: sub.execution, item: run.item }, false);
				if (command.propagate) {
					reach('sub_workflow_held_above');
					running.splice(running.indexOf(run), 1);
					await failRun(run, false);
				} else {
					reach('sub_workflow_alone');
				}
				return;
			}
			case 'writeParks': {
				if (running.length === 0) return;
				const run = running[command.execution % running.length];
				const request: ParkRequest = {
					workflowId,
					executionId: run.id,
					step: 'Create Contact',
					idempotencyKey: `write:${run.item}`,
					businessId: run.item,
					errorClass: 'unknown_outcome',
					errorMessage: 'the response was lost',
					payload: { item: run.item },
				};
				const [letter] = await parkItems(store, [request]);
				world.writeLetters = (world.writeLetters ?? 0) + 1;
				if (command.alerted && !letter.refused) {
					await notifyAlerts(store, [{ ...request, deadLetterId: letter.id }]);
					alerted([letter.id]);
				}
				return;
			}
			case 'time':
				await timePasses();
				return;
		}
	};

	/** A waiting execution resumes in a new process, with new hooks, and ends `how`. */
	const resume = async (command: Extract<ItemCommand, { kind: 'resume' }>) => {
		const run = take(waiting, command.execution);
		if (!run) return;
		if (command.attached) {
			// A node of the package after the Wait attaches the hook again; its end settles.
			reach('wait_resumed_attached');
			if ((await resumeExecutionClaims(store, run.id, 60)) === 0) return;
			records.delete(run.id);
			running.push(run);
			await act({
				kind: 'end',
				execution: running.length - 1,
				how: command.how === 'cancel' ? 'cancel' : command.how,
			});
			return;
		}
		// No node of the package after the Wait: no hook runs; n8n's record says how it ended.
		reach('wait_resumed_unattached');
		const held = await heldBy(run.id);
		if (command.how === 'crash') {
			// n8n died during the resumed run and marks it crashed, its record still the waiting one.
			for (const eventId of held) failedEvents.add(eventId);
			await errorWorkflowFor({ execution: run.id, crashed: true, runs: 0, events: held }, 'owed');
			return;
		}
		const record = recordOf(command.how);
		records.set(run.id, record);
		if (record.state === 'gone') reach('gone_after_wait');
		if (command.how === 'success') {
			completed(held);
			return;
		}
		reach('resumed_run_failed');
		for (const eventId of held) failedEvents.add(eventId);
		if (command.how === 'error')
			await errorWorkflowFor({ execution: run.id, crashed: false, runs: 0, events: held }, 'owed');
	};

	/** Time passes: every waiting execution's hold runs out. */
	const timePasses = async () =>
		await store.query(
			`UPDATE ${store.table('processed_events')} SET lease_until = now() - interval '1 second', ask_at = now() - interval '1 second' WHERE workflow_id = $1 AND status = 'in_progress' AND waiting_till IS NOT NULL`,
			[workflowId],
		);

	/**
	 * One Recover run: executions that waited are settled by n8n's record, re-runs finish (complete,
	 * calling the sub-workflow again) or throw (back to Recover), items past the cap are parked, and
	 * failed claims nothing holds are swept; every letter it parks or finds due is alerted.
	 */
	const recover = async (rerun: Rerun, now = new Date()): Promise<number> => {
		const execution = `${id}-r${executions++}`;
		for (const waited of await waitingExecutions(store, { limit: 10, workflowId }))
			await settleWaitedExecution(
				store,
				waited,
				records.get(waited.executionId) ?? { state: 'waiting' },
				{ now },
			);
		const taken = await takeCrashed(store, {
			executionId: execution,
			limit: 10,
			maxAttempts: MAX_RECOVERIES,
			leaseSeconds: 600,
			workflowId,
		});
		for (const item of taken.filter((t) => t.consumer === subConsumer)) {
			// A sub-workflow's item is its caller's: never run again (or given up) on its own while
			// the caller's item lives (its re-run calls the sub-workflow again) or a letter holds it.
			const root = item.eventId.slice(0, -'-sub'.length);
			const caller = await claimRow(root);
			const rootOpen = await store.query(
				`SELECT 1 FROM ${store.table('dead_letters')} WHERE idempotency_key = $1 AND is_open`,
				[`event:${consumer}:${root}`],
			);
			// Nor once a later run finished the caller's item: the sub-workflow died with its caller.
			if (caller?.status === 'in_progress' || caller?.status === 'done' || rootOpen.length > 0)
				world.refused.push(
					`Recover took the sub-workflow's item ${item.eventId} on its own while its caller's item ${root} ${caller?.status === 'in_progress' ? 'was alive' : caller?.status === 'done' ? 'was done' : 'had an open letter'}`,
				);
		}
		for (const item of taken.filter((t) => !t.givenUp)) {
			reach('recover_rerun');
			// Each re-run is an execution of its own, under the recovery run's, marked as under way.
			await markRerun(store, {
				consumer: item.consumer,
				eventId: item.eventId,
				executionId: execution,
			});
			const rerunExecution = `${execution}-l${executions++}`;
			if (rerun === 'crash' && item.consumer === consumer) {
				// n8n dies inside the sub-workflow this re-run calls: the run, the re-run and the
				// sub-workflow's execution with it. n8n reports the re-run crashed at its restart;
				// what the dead process held lapses (its keeper renews nothing).
				reach('recover_rerun_crashed');
				const sub = await callSub(rerunExecution, item.eventId, [rerunExecution, execution]);
				await errorWorkflowFor(
					{ execution: rerunExecution, crashed: true, runs: 0, events: [] },
					'owed',
				);
				await store.query(
					`UPDATE ${store.table('processed_events')} SET lease_until = now() - interval '1 second' WHERE execution_id = ANY($1) AND status = 'in_progress'`,
					[[execution, sub.execution]],
				);
				return taken.length;
			}
			// Recorded as the re-run returns (n8n names it on its error too).
			const returned = async () =>
				await recordRerun(store, {
					consumer: item.consumer,
					eventId: item.eventId,
					executionId: execution,
					rerunExecution,
				});
			if (rerun === 'success' || rerun === 'skip') {
				// The re-run calls the sub-workflow again, as the item's first run did (or skips it).
				if (item.consumer === consumer && rerun === 'success') {
					const sub = await callSub(rerunExecution, item.eventId, [rerunExecution, execution]);
					if (sub.claimed) {
						completed(await heldBy(sub.execution));
						await hook(sub.execution, 'success');
					}
				}
				await returned();
				const [done] = await completeEvents(store, item.consumer, [item.eventId], execution);
				if (done.changed) completed([item.eventId]);
			} else {
				await returned();
				await returnToRecovery(store, {
					consumer: item.consumer,
					eventId: item.eventId,
					executionId: execution,
					message: 'the re-run failed',
				});
			}
		}
		const givenUp = taken.filter((t) => t.givenUp);
		if (givenUp.length > 0) reach('recover_gave_up');
		for (const item of givenUp) {
			const letters = await parkKeptItems(
				store,
				[
					{
						workflowId,
						executionId: item.originExecutionId ?? undefined,
						step: 'crashed',
						idempotencyKey: `event:${item.consumer}:${item.eventId}`,
						businessId: item.eventId,
						errorClass: 'crashed',
						payload: item.payload,
					},
				],
				{ executionId: item.originExecutionId ?? undefined, claims: [item] },
			);
			alerted(letters.filter((l) => !l.alreadyAlerted).map((letter) => letter.id));
		}
		const swept = await parkUnsettledClaims(store, { limit: 10, workflowId, graceSeconds: 0 });
		alerted(swept.map((claim) => claim.result.id));
		alerted((await takeDueAlerts(store, 10, workflowId)).map((letter) => letter.id));
		return taken.length + swept.length;
	};

	for (const command of schedule.commands) await act(command);
	if ((world.writeLetters ?? 0) > 0) {
		const folded = await store.query<{ n: number }>(
			`SELECT count(*)::int AS n FROM ${store.table('dead_letters')} WHERE workflow_id = $1 AND idempotency_key LIKE 'write:%' AND status = 'resolved'`,
			[workflowId],
		);
		if (folded[0].n > 0) reach('write_letter_folded');
		const alertedFolded = await store.query<{ n: number }>(
			`SELECT count(*)::int AS n FROM ${store.table('dead_letters')} WHERE workflow_id = $1 AND idempotency_key LIKE 'write:%' AND status = 'resolved' AND issue_id IS NOT NULL`,
			[workflowId],
		);
		if (alertedFolded[0].n > 0) reach('alerted_write_letter_folded');
	}

	// The world after the schedule, without any delivery: every waiting execution resumes and
	// ends (n8n's record says success), n8n dies with what still runs and reports every crash at
	// its restart, the Error handler runs for each report it owes, time passes, and Recover runs
	// until it has nothing left (re-runs that fail, then succeed, then give up; sweeps).
	for (const run of waiting.splice(0)) {
		records.set(run.id, recordOf('success'));
		completed(await heldBy(run.id));
	}
	for (const run of running.splice(0))
		if (!stalled.has(run.id))
			await errorWorkflowFor(
				{ execution: run.id, crashed: true, runs: 0, events: await heldBy(run.id) },
				'owed',
			);
	for (const report of owed.splice(0)) await errorHandler(report, false);
	// What n8n's crash left to lapse (a dead process renews nothing), and every hold run out.
	await store.query(
		`UPDATE ${store.table('processed_events')} SET lease_until = now() - interval '1 second' WHERE workflow_id = $1 AND status = 'in_progress' AND execution_id IS NOT NULL AND execution_id NOT LIKE $2`,
		[workflowId, `${id}-r%`],
	);
	for (let round = 0; round < MAX_RECOVERIES + 4; round++) {
		await timePasses();
		const later = new Date(Date.now() + LATER_MS);
		if ((await recover(round % 2 === 0 ? 'error' : 'success', later)) === 0 && round > 0) break;
	}

	return await checkItemWorld(store, world);
}
