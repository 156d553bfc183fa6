import { pause, PauseScope, resume } from '../control';
import { MAX_DRILL_MINUTES, startDrill, stopDrill } from '../drill';
import {
	compensatedReplayMessage,
	compensatedSteps,
	getDeadLetters,
	listDeadLetters,
	updateDeadLetterStatus,
	updateDeadLetterStatuses,
} from '../deadletter';
import { type DeadLetterStatus, OPEN_STATUSES } from '../deadletter/statuses';
import { ReliabilityError } from '../errors';
import { compensateDeadLetter, fetchCompensationSender } from '../idempotency/compensate';
import type { Store } from '../store';
import { filtersOf, listFilter } from './filters';
import { controlRefusal, refusalFor, teamsActedFor, teamsOf } from './permissions';
import { STATUS_LABELS } from './layout';
import type { ConsoleOptions, Flash } from './types';
import { str } from './values';

/** The console's actions: each checks what it may do, does it and says what it did. */
export class ActionRefusedError extends ReliabilityError {}

/** The confirmation after a redirect: fixed text per action, with only numbers from the URL. */
export function doneMessage(
	q: Record<string, unknown>,
	operator: string | null,
): Flash | undefined {
	const done = str(q.done);
	if (!done) return undefined;
	const id = /^\d+$/.test(str(q.done_id)) ? str(q.done_id) : '';
	const n = /^\d+$/.test(str(q.n)) ? Number(str(q.n)) : 0;
	const by = operator ? ` (by ${operator})` : '';
	const texts: Record<string, string> = {
		replay: `Dead letter ${id} set to replay${by}; the Replay workflow runs it now.`,
		being_fixed: `Dead letter ${id} marked as being fixed${by}.`,
		resolve: `Dead letter ${id} resolved${by}.`,
		abandon: `Dead letter ${id} abandoned${by}.`,
		compensate: `Dead letter ${id} compensated${by}: ${n} step${n === 1 ? '' : 's'} reversed; see its history for the answers.`,
		batch_replay: `${n} dead letter${n === 1 ? '' : 's'} set to replay${by}.`,
		pause: `Paused${by}: its writes are held.`,
		resume: `Resumed${by}; ${n} held item${n === 1 ? '' : 's'} set to replay.`,
		drill_start: `Fire drill started${by}: it turns itself off after ${n} minute${n === 1 ? '' : 's'}. A drill sends real requests: point the workflow at a test target.`,
		drill_stop: `Fire drill stopped${by}.`,
	};
	return texts[done] ? { kind: 'ok', text: texts[done] } : undefined;
}

/** What an action did: the page's message, how many letters it set to replay, its count. */
export interface ActionDone {
	message: string;
	replayRequested: number;
	count: number;
}

/** One request to act: who asks, with which form fields, against which store. */
interface ActionInput {
	store: Store;
	body: Record<string, unknown>;
	operator: string;
	options: ConsoleOptions;
	/** The form's note, trimmed. */
	note: string;
	/** The dead letter the action is for, as the form gave it (checked by each action). */
	id: string;
}

/** Refuses an operator outside the team that owns the letter `input.id`. */
function refuseOutsider(input: ActionInput, owner: unknown, verb: string): void {
	const why = refusalFor(teamsOf(input.options), input.operator, owner);
	if (why)
		throw new ActionRefusedError(
			`You may not ${verb} dead letter ${input.id}: ${why}`,
			typeof owner === 'string' && owner
				? `Ask someone in team ${owner} to do it, or ask an administrator to add you to that team in the console's Teams option.`
				: "Ask an administrator to add you to the console's Teams option.",
		);
}

/** Refuses an operator who may not use the controls (pause, batch replay, drills) at all. */
function refuseNonMember(input: ActionInput, what: string): void {
	const outsider = controlRefusal(teamsOf(input.options), input.operator);
	if (outsider)
		throw new ActionRefusedError(
			`You may not ${what}: ${outsider}`,
			"Ask an administrator to add you to the console's Teams option.",
		);
}

/** The letter the form names, or a refusal saying to pick one. */
function chosenId(input: ActionInput, verb: string): string {
	if (!/^\d+$/.test(input.id))
		throw new ActionRefusedError(
			`No dead letter chosen to ${verb}`,
			'Open an item and use its buttons.',
		);
	return input.id;
}

/** Moves one open letter to `to`, refusing a closed one and a close without a note. */
async function statusChange(
	input: ActionInput,
	to: DeadLetterStatus,
	verb: string,
): Promise<ActionDone> {
	const { store, operator, note } = input;
	const id = chosenId(input, verb);
	const [current] = await getDeadLetters(store, [id]);
	if (!current)
		throw new ActionRefusedError(`Dead letter ${id} does not exist`, 'Go back to the list.');
	refuseOutsider(input, current.owner, verb);
	if (!OPEN_STATUSES.includes(current.status))
		throw new ActionRefusedError(
			`Dead letter ${id} is already ${STATUS_LABELS[current.status]}`,
			'Closed items take no more actions.',
		);
	if ((to === 'resolved' || to === 'abandoned') && !note)
		throw new ActionRefusedError(
			`To ${verb} dead letter ${id}, write a note`,
			'Say what was done, or why it is given up; the note goes into its history.',
		);
	await updateDeadLetterStatus(store, { id, to, actor: operator, reason: note || undefined });
	return {
		message: `Dead letter ${id}: ${STATUS_LABELS[to]} (by ${operator}).`,
		replayRequested: to === 'replay_requested' ? 1 : 0,
		count: 1,
	};
}

async function compensate(input: ActionInput): Promise<ActionDone> {
	const { store, operator, note } = input;
	const id = chosenId(input, 'compensate');
	const [record] = await getDeadLetters(store, [id]);
	if (record) refuseOutsider(input, record.owner, 'compensate');
	const result = await compensateDeadLetter(
		store,
		{
			id,
			actor: operator,
			reason: note || undefined,
			executionId: `console:${id}:${Date.now()}`,
		},
		fetchCompensationSender(),
	);
	if (result.result === 'already')
		throw new ActionRefusedError(
			`Dead letter ${id} is already compensated`,
			'Nothing was sent again; its history holds the answers.',
		);
	if (result.result === 'failed')
		throw new ActionRefusedError(
			`Compensating dead letter ${id} stopped: ${result.failure.message}`,
			`The failed compensation is parked${result.failure.deadLetterId ? ` as dead letter ${result.failure.deadLetterId}` : ''}; fix it, then press Compensate again (what was reversed is not sent again).`,
		);
	return {
		message: `Dead letter ${id} compensated (by ${operator}).`,
		replayRequested: 0,
		count: result.sent.length,
	};
}

async function replay(input: ActionInput): Promise<ActionDone> {
	const { store, id } = input;
	const compensated = /^\d+$/.test(id) ? (await compensatedSteps(store, [id])).get(id) : undefined;
	if (compensated)
		throw new ActionRefusedError(
			compensatedReplayMessage(id, compensated),
			'Finish what Compensate started (press Compensate again), or resolve or abandon the item with a note saying what is left to do.',
		);
	return await statusChange(input, 'replay_requested', 'replay');
}

async function batchReplay(input: ActionInput): Promise<ActionDone> {
	const { store, body, operator, options, note } = input;
	const filters = filtersOf(body);
	const limit = options.batchLimit ?? 1000;
	// Only items waiting for a person: held ones wait for their integration to resume.
	const statuses: DeadLetterStatus[] =
		filters.status === 'open' ? ['new', 'being_fixed'] : [filters.status as DeadLetterStatus];
	if (!statuses.every((s) => s === 'new' || s === 'being_fixed'))
		throw new ActionRefusedError(
			`Items in status "${filters.status}" cannot be replayed in a batch`,
			'Filter on new or being fixed (held items are released by resuming their integration).',
		);
	refuseNonMember(input, 'replay items');
	// With teams, a batch takes only the items of the operator's teams (and unowned ones),
	// chosen in the statement so that other teams' items never fill the batch's limit.
	const rows = await listDeadLetters(store, {
		...listFilter(filters, limit),
		statuses,
		ownedBy: teamsActedFor(teamsOf(options), operator),
	});
	const changed = await updateDeadLetterStatuses(
		store,
		rows.map((row) => String(row.id)),
		{
			to: 'replay_requested',
			actor: operator,
			reason: note || 'batch replay from the console',
		},
	);
	return {
		message: `${changed.length} dead letter${changed.length === 1 ? '' : 's'} set to replay (by ${operator}).`,
		replayRequested: changed.length,
		count: changed.length,
	};
}

/** The scope and name a pause or resume is for (an integration unless the form says). */
const pauseTarget = (input: ActionInput) => ({
	scope: (str(input.body.scope) || PauseScope.integration) as PauseScope,
	name: str(input.body.name),
});

async function pauseAction(input: ActionInput): Promise<ActionDone> {
	const { scope, name } = pauseTarget(input);
	refuseNonMember(input, `pause ${scope} ${name}`);
	await pause(input.store, scope, name, input.operator, input.note);
	return {
		message: `${scope} ${name} paused (by ${input.operator}): its writes are held.`,
		replayRequested: 0,
		count: 0,
	};
}

async function resumeAction(input: ActionInput): Promise<ActionDone> {
	const { scope, name } = pauseTarget(input);
	refuseNonMember(input, `resume ${scope} ${name}`);
	const state = await resume(input.store, scope, name, input.operator, input.note);
	return {
		message: `${scope} ${name} resumed (by ${input.operator}); ${state.released} held item${state.released === 1 ? '' : 's'} set to replay.`,
		replayRequested: state.released,
		count: state.released,
	};
}

async function drillStart(input: ActionInput): Promise<ActionDone> {
	const name = str(input.body.name);
	refuseNonMember(input, `start a fire drill of ${name}`);
	const minutes = Number(str(input.body.minutes) || '30');
	const drill = await startDrill(input.store, {
		integration: name,
		actor: input.operator,
		reason: input.note,
		minutes,
	});
	return {
		message: `Fire drill of ${drill.integration} started (by ${input.operator}) until ${drill.expiresAt.toISOString()}.`,
		replayRequested: 0,
		count: Math.min(minutes, MAX_DRILL_MINUTES),
	};
}

async function drillStop(input: ActionInput): Promise<ActionDone> {
	const name = str(input.body.name);
	refuseNonMember(input, `stop a fire drill of ${name}`);
	const stopped = await stopDrill(input.store, {
		integration: name,
		actor: input.operator,
		reason: input.note,
	});
	if (!stopped)
		throw new ActionRefusedError(
			`No fire drill of ${name} is on`,
			'It may have ended by itself: drills turn off at their end time.',
		);
	return {
		message: `Fire drill of ${name} stopped (by ${input.operator}).`,
		replayRequested: 0,
		count: 0,
	};
}

/** Every action the console's forms post, by the form's `action` field. */
const ACTIONS: Record<string, (input: ActionInput) => Promise<ActionDone>> = {
	compensate,
	replay,
	being_fixed: (input) => statusChange(input, 'being_fixed', 'mark as being fixed'),
	resolve: (input) => statusChange(input, 'resolved', 'resolve'),
	abandon: (input) => statusChange(input, 'abandoned', 'abandon'),
	batch_replay: batchReplay,
	pause: pauseAction,
	resume: resumeAction,
	drill_start: drillStart,
	drill_stop: drillStop,
};

/** Runs the action a console form posted, as `operator`; refusals are ActionRefusedError. */
export async function runAction(
	store: Store,
	action: string,
	body: Record<string, unknown>,
	operator: string,
	options: ConsoleOptions,
): Promise<ActionDone> {
	const run = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
	if (!run)
		throw new ActionRefusedError(`Unknown action "${action}"`, 'Use the buttons on the page.');
	return await run({ store, body, operator, options, note: str(body.note), id: str(body.id) });
}
