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

export async function runAction(
	store: Store,
	action: string,
	body: Record<string, unknown>,
	operator: string,
	options: ConsoleOptions,
): Promise<{ message: string; replayRequested: number; count: number }> {
	const note = str(body.note);
	const id = str(body.id);
	const teams = teamsOf(options);
	const refuseOutsider = (owner: unknown, verb: string) => {
		const why = refusalFor(teams, operator, owner);
		if (why)
			throw new ActionRefusedError(
				`You may not ${verb} dead letter ${id}: ${why}`,
				typeof owner === 'string' && owner
					? `Ask someone in team ${owner} to do it, or ask an administrator to add you to that team in the console's Teams option.`
					: "Ask an administrator to add you to the console's Teams option.",
			);
	};
	const statusChange = async (to: DeadLetterStatus, verb: string) => {
		if (!/^\d+$/.test(id))
			throw new ActionRefusedError(
				`No dead letter chosen to ${verb}`,
				'Open an item and use its buttons.',
			);
		const [current] = await getDeadLetters(store, [id]);
		if (!current)
			throw new ActionRefusedError(`Dead letter ${id} does not exist`, 'Go back to the list.');
		refuseOutsider(current.owner, verb);
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
	};
	switch (action) {
		case 'compensate': {
			if (!/^\d+$/.test(id))
				throw new ActionRefusedError(
					'No dead letter chosen to compensate',
					'Open an item and use its buttons.',
				);
			const [record] = await getDeadLetters(store, [id]);
			if (record) refuseOutsider(record.owner, 'compensate');
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
		case 'replay': {
			const compensated = /^\d+$/.test(id)
				? (await compensatedSteps(store, [id])).get(id)
				: undefined;
			if (compensated)
				throw new ActionRefusedError(
					compensatedReplayMessage(id, compensated),
					'Finish what Compensate started (press Compensate again), or resolve or abandon the item with a note saying what is left to do.',
				);
			return await statusChange('replay_requested', 'replay');
		}
		case 'being_fixed':
			return await statusChange('being_fixed', 'mark as being fixed');
		case 'resolve':
			return await statusChange('resolved', 'resolve');
		case 'abandon':
			return await statusChange('abandoned', 'abandon');
		case 'batch_replay': {
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
			const outsider = controlRefusal(teams, operator);
			if (outsider)
				throw new ActionRefusedError(
					`You may not replay items: ${outsider}`,
					"Ask an administrator to add you to the console's Teams option.",
				);
			// With teams, a batch takes only the items of the operator's teams (and unowned ones),
			// chosen in the statement so that other teams' items never fill the batch's limit.
			const rows = await listDeadLetters(store, {
				...listFilter(filters, limit),
				statuses,
				ownedBy: teamsActedFor(teams, operator),
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
		case 'pause':
		case 'resume': {
			const scope = str(body.scope) || PauseScope.integration;
			const name = str(body.name);
			const outsider = controlRefusal(teams, operator);
			if (outsider)
				throw new ActionRefusedError(
					`You may not ${action} ${scope} ${name}: ${outsider}`,
					"Ask an administrator to add you to the console's Teams option.",
				);
			if (action === 'pause') {
				await pause(store, scope as PauseScope, name, operator, note);
				return {
					message: `${scope} ${name} paused (by ${operator}): its writes are held.`,
					replayRequested: 0,
					count: 0,
				};
			}
			const state = await resume(store, scope as PauseScope, name, operator, note);
			return {
				message: `${scope} ${name} resumed (by ${operator}); ${state.released} held item${state.released === 1 ? '' : 's'} set to replay.`,
				replayRequested: state.released,
				count: state.released,
			};
		}
		case 'drill_start':
		case 'drill_stop': {
			const name = str(body.name);
			const outsider = controlRefusal(teams, operator);
			if (outsider)
				throw new ActionRefusedError(
					`You may not ${action === 'drill_start' ? 'start' : 'stop'} a fire drill of ${name}: ${outsider}`,
					"Ask an administrator to add you to the console's Teams option.",
				);
			if (action === 'drill_start') {
				const minutes = Number(str(body.minutes) || '30');
				const drill = await startDrill(store, {
					integration: name,
					actor: operator,
					reason: note,
					minutes,
				});
				return {
					message: `Fire drill of ${drill.integration} started (by ${operator}) until ${drill.expiresAt.toISOString()}.`,
					replayRequested: 0,
					count: Math.min(minutes, MAX_DRILL_MINUTES),
				};
			}
			const stopped = await stopDrill(store, { integration: name, actor: operator, reason: note });
			if (!stopped)
				throw new ActionRefusedError(
					`No fire drill of ${name} is on`,
					'It may have ended by itself: drills turn off at their end time.',
				);
			return {
				message: `Fire drill of ${name} stopped (by ${operator}).`,
				replayRequested: 0,
				count: 0,
			};
		}
		default:
			throw new ActionRefusedError(`Unknown action "${action}"`, 'Use the buttons on the page.');
	}
}
