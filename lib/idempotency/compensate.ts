import {
	appendEvidence,
	type DeadLetterRecord,
	failedStepsNow,
	getDeadLetters,
	isDeadLetterId,
	type ItemStep,
	StatusChangeRefusedError,
	stepDoneNow,
	updateDeadLetterStatus,
} from '../deadletter';
import { describeValue } from '../describe';
import { ALLOWED_FROM, OPEN_STATUSES } from '../deadletter/statuses';
import {
	COMPENSATION_TAKER,
	holdForCompensationSql,
	touchCompensationHoldSql,
} from '../deadletter/sql';
import { MASKED, maskText } from '../masking';
import type { Store } from '../store';
import { storableText } from '../store/storable';
import { type CompensatingRequest, compensatingRequest } from './compensation';
import { derivedKey, requestFingerprint } from './keys';
import { fetchSend } from './fetchSend';
import { DEFAULT_POLICY, type RetryPolicy } from './policy';
import type { SendResult, WireWindow, WriteOutcome } from './types';
import { compensateKeySql, keyStatusSql, uncompensateKeySql } from './sql';
import { runWrites } from './writer';

/**
 * Compensate: reverses the steps a parked item had already taken, newest first. Each
 * compensating request is an idempotent write of its own (key `<step key>:compensate`, or its
 * hash when that would be longer than a key may be), so pressing Compensate twice sends it once.
 * A step reversed by its request has its own key record marked `compensated`, so a later run with
 * that key is refused instead of answered from a saved response whose resource is gone. Every
 * answer is evidence in the record's audit trail; the record ends `compensated`, or goes back to
 * new with the compensation that failed parked.
 */

export interface CompensateInput {
	id: string;
	actor: string;
	executionId: string;
	/** Notes for the audit trail, e.g. why the operator compensates. */
	reason?: string;
	policy?: RetryPolicy;
}

export interface CompensateDeps {
	send(request: CompensatingRequest & { key: string }, wire: WireWindow): Promise<SendResult>;
}

interface CompensatedStep {
	step: string | null;
	key: string;
	method: string;
	url: string;
	status?: number;
	/** Answered from the compensation's saved response: it had been sent before. */
	replayed: boolean;
}

/** What Compensate did for each step of a record. */
interface CompensationReport {
	id: string;
	sent: CompensatedStep[];
	/** Repair plans of steps that cannot be reversed by a request: a checklist for a person. */
	manual: Array<{ step: string | null; key: string; plan: string }>;
	/** Steps without a compensation: nothing was done for them. */
	none: Array<{ step: string | null; key: string }>;
}

/** compensated: done now; already: it was compensated before (nothing sent); failed: see failure. */
export type CompensateResult =
	| (CompensationReport & { result: 'compensated' | 'already'; failure?: undefined })
	| (CompensationReport & {
			result: 'failed';
			failure: { step: string | null; key: string; message: string; deadLetterId?: string };
	  });

/**
 * A sender with Node's fetch, for callers outside n8n's HTTP helpers (the console): the derived
 * key in the Idempotency-Key header; a refused connection is not sent, anything later is lost.
 */
export function fetchCompensationSender(timeoutMs = 10_000): CompensateDeps {
	return { send: (request, wire) => fetchSend(request, timeoutMs, wire) };
}

const excerpt = (body: unknown): string => {
	const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? '');
	return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

/**
 * The store keeps no secrets: a template or a saved response that held one holds `[masked]`
 * instead, and a request built from it would send that to the target. Refused before sending.
 */
function refuseMaskedValues(request: CompensatingRequest): void {
	const where = [
		request.url.includes(MASKED) || request.url.includes(encodeURIComponent(MASKED))
			? 'its URL'
			: '',
		JSON.stringify(request.body ?? '').includes(MASKED) ? 'its body' : '',
	].filter(Boolean);
	if (where.length > 0)
		throw new Error(
			`${where.join(' and ')} would carry a masked value (${MASKED}), since the store keeps no secrets; remove the secret from the step's Compensation URL and Body (a target that needs one is reversed by hand, or by a workflow whose HTTP Request node takes it from an n8n credential)`,
		);
}

export async function compensateDeadLetter(
	store: Store,
	input: CompensateInput,
	deps: CompensateDeps,
): Promise<CompensateResult> {
	const given: unknown = input.id;
	const id =
		typeof given === 'number' || typeof given === 'string' ? String(given).trim() : undefined;
	if (!id || !isDeadLetterId(id))
		throw new StatusChangeRefusedError(
			`${describeValue(given)} is not a dead letter ID`,
			'Set it to the id of a record (Get or List shows them), e.g. {{ $json.id }}.',
		);
	const [record] = await getDeadLetters(store, [id]);
	if (!record)
		throw new StatusChangeRefusedError(
			`Dead letter ${id} does not exist`,
			'Check the ID (Get or List shows the IDs that exist).',
		);
	const steps = (Array.isArray(record.steps) ? record.steps : []) as ItemStep[];
	const newestFirst = [...steps].reverse();
	// `result` second, as every outcome lists it; a later outcome replaces it in place.
	const result: CompensationReport & { result: 'compensated' } = {
		id: record.id,
		result: 'compensated',
		sent: [],
		manual: [],
		none: [],
	};
	for (const step of newestFirst) {
		if (step.compensation?.kind === 'manual')
			result.manual.push({ step: step.step, key: step.key, plan: step.compensation.plan });
		else if (!step.compensation) result.none.push({ step: step.step, key: step.key });
	}
	const generation = await holdForCompensation(store, record, input.actor);
	if (generation === undefined) return { ...result, result: 'already' };

	for (const step of newestFirst) {
		if (step.compensation?.kind !== 'request') continue;
		// Still under way: the hold is renewed, so only a run that stopped or died is handed back.
		await store.execute(touchCompensationHoldSql(store, { id: record.id, generation }));
		const key = derivedKey(step.key, 'compensate');
		let request: CompensatingRequest;
		let saved: unknown = step.response;
		try {
			saved = JSON.parse(step.response ?? 'null');
		} catch {
			/* a text response stays text */
		}
		try {
			request = compensatingRequest(step.compensation, saved);
			refuseMaskedValues(request);
		} catch (error) {
			const message = `the compensation of ${step.step ?? step.key} cannot be built: ${error instanceof Error ? error.message : String(error)}`;
			await appendEvidence(store, record.id, input.actor, message);
			await releaseHold(store, record.id, input.actor, generation);
			return { ...result, result: 'failed', failure: { step: step.step, key, message } };
		}
		// Before every send the step is fenced: it reads compensated before its reversal can reach
		// the target, so a run that starts from then on is refused rather than answered from the
		// resource being removed. A step no longer done for this letter is not reversed.
		const fence = async (): Promise<boolean> =>
			(
				await store.query(
					compensateKeySql(store, {
						scope: step.scope,
						key: step.key,
						actor: input.actor,
						deadLetterId: record.id,
					}),
				)
			).length > 0;
		const [outcome]: WriteOutcome[] = await runWrites(
			store,
			{
				workflowId: String(record.workflow_id),
				workflowName: typeof record.workflow_name === 'string' ? record.workflow_name : undefined,
				executionId: input.executionId,
				node: `${step.step ?? 'step'} (compensation)`,
				retentionDays: 30,
				policy: input.policy ?? DEFAULT_POLICY,
				onUnknown: 'retry',
				concurrency: 1,
				maxSavedBodyChars: 65_536,
				park: true,
				owner: typeof record.owner === 'string' ? record.owner : undefined,
				alreadyHappened: `compensating dead letter ${record.id}; newer steps were reversed: ${
					result.sent.map((s) => s.step ?? s.key).join(', ') || 'none'
				}`,
			},
			[
				{
					index: 0,
					scope: step.scope,
					key,
					fingerprint: requestFingerprint(request),
					payload: { deadLetterId: record.id, step: step.step, ...request },
					itemRef: `compensation:${record.id}`,
				},
			],
			{
				send: async (write, _attempt, wire) =>
					(await fence())
						? await deps.send({ ...request, key: write.key }, wire)
						: stepNoLongerDone(step),
			},
		);
		const line = `compensation of ${step.step ?? step.key} (key ${key}): ${request.method} ${request.url}`;
		if (!outcome.ok) {
			// Nothing of the reversal took effect: the step is done again, as it was. Otherwise it
			// stays compensated (a later run is refused) until a person has checked the target.
			const undone =
				(
					await store.query(
						uncompensateKeySql(store, {
							scope: step.scope,
							key: step.key,
							deadLetterId: record.id,
							reversalKey: key,
						}),
					)
				).length > 0;
			const stillFenced =
				!undone && (await statusOf(store, step.scope, step.key)) === 'compensated';
			const message = `${line} failed: ${outcome.failure.message}${
				stillFenced
					? `; the reversal may have taken effect, so ${step.step ?? step.key} stays compensated (a later run with its key is refused): check the target`
					: ''
			}`;
			await appendEvidence(store, record.id, input.actor, message);
			await releaseHold(store, record.id, input.actor, generation);
			return {
				...result,
				result: 'failed',
				failure: {
					step: step.step,
					key,
					message: maskText(message),
					deadLetterId: outcome.failure.deadLetterId,
				},
			};
		}
		// Answered from the reversal's saved response (sent by an earlier press), nothing was sent
		// now: the step is fenced here all the same.
		await fence();
		const answer = outcome.answer;
		await appendEvidence(
			store,
			record.id,
			input.actor,
			`${line} -> HTTP ${answer.status}${outcome.replayed ? ' (answered from its saved response: sent before)' : ''} ${excerpt(answer.body)}`,
		);
		result.sent.push({
			step: step.step,
			key,
			method: request.method,
			url: request.url,
			status: answer.status,
			replayed: outcome.replayed,
		});
	}
	const checklist = result.manual.map((m) => `[ ] ${m.step ?? m.key}: ${m.plan}`).join('; ');
	const reason = [
		input.reason,
		`${result.sent.length} step${result.sent.length === 1 ? '' : 's'} reversed`,
		checklist ? `manual repair to do: ${checklist}` : '',
		result.none.length
			? `no compensation declared for: ${result.none.map((n) => n.step ?? n.key).join(', ')}`
			: '',
	]
		.filter(Boolean)
		.join('; ');
	try {
		await updateDeadLetterStatus(store, {
			id: record.id,
			to: 'compensated',
			actor: input.actor,
			reason,
			expectedGeneration: generation,
		});
	} catch (error) {
		if (!(error instanceof StatusChangeRefusedError)) throw error;
		const [now] = await getDeadLetters(store, [record.id]);
		// Pressed twice at once, and the other press that failed released the record while this
		// one reversed every step: hold it again and close it, since its steps are reversed now.
		if (now && now.status !== 'compensated' && OPEN_STATUSES.includes(now.status)) {
			const again = await holdForCompensation(store, now, input.actor);
			if (again !== undefined)
				await updateDeadLetterStatus(store, {
					id: record.id,
					to: 'compensated',
					actor: input.actor,
					reason,
					expectedGeneration: again,
				});
			return result;
		}
		// Pressed twice at once: the other press closed it; its compensations were the same ones.
		if (now?.status !== 'compensated') throw error;
		return { ...result, result: 'already' };
	}
	return result;
}

/**
 * The step's record is no longer done for this letter (claimed again after its retention,
 * compensated for another letter, gone): its reversal is not sent.
 */
const stepNoLongerDone = (step: ItemStep): SendResult => ({
	kind: 'not_sent',
	code: 'ESTEPCHANGED',
	message: `${step.step ?? step.key} is no longer done under key ${step.key} (claimed again, or compensated for another record): its reversal was not sent`,
});

/** The status of a key record (a step's, or a compensation's own). */
async function statusOf(store: Store, scope: string, key: string): Promise<string | undefined> {
	const [row] = await store.query<{ status: string }>(keyStatusSql(store, { scope, key }));
	return row?.status;
}

/** Who holds a record for a replay run (the Replay workflow's take), if one does. */
const replayHolder = (record: DeadLetterRecord): string | undefined =>
	record.status === 'being_fixed' &&
	typeof record.taken_by === 'string' &&
	record.taken_by &&
	!record.taken_by.startsWith(COMPENSATION_TAKER)
		? record.taken_by
		: undefined;

const since = (value: unknown): string =>
	value instanceof Date ? ` since ${value.toISOString()}` : '';

/**
 * Holds the record while its steps are reversed: being fixed (by the compensating actor), so the
 * Replay workflow, which takes only records asked to be replayed, cannot take it meanwhile and
 * re-run the failed step on top of reversed ones. Refused while a replay run holds it. Returns
 * the generation the close presents, or undefined when it is compensated already.
 */
async function holdForCompensation(
	store: Store,
	record: DeadLetterRecord,
	actor: string,
): Promise<string | undefined> {
	const who = typeof actor === 'string' ? storableText(actor.trim()) : '';
	if (!who)
		throw new StatusChangeRefusedError(
			`Compensating dead letter ${record.id} needs an actor`,
			'Say who makes the change (a name or e-mail), so the audit trail records it.',
		);
	let current: DeadLetterRecord | undefined = record;
	for (let tries = 0; tries < 3 && current; tries++) {
		if (current.status === 'compensated') return undefined;
		const holder = replayHolder(current);
		if (holder)
			throw new StatusChangeRefusedError(
				`Dead letter ${current.id} is held by a replay (${holder}${since(current.updated_at)}): it cannot be compensated while the replay runs`,
				'Wait until the replay ends: it marks the record replayed, or new when the step failed again; compensate then if it is still needed. If that replay run died, set the record back to new first.',
			);
		if (!OPEN_STATUSES.includes(current.status))
			throw new StatusChangeRefusedError(
				`Dead letter ${current.id} is ${current.status} (closed): it cannot be compensated`,
				'A closed record stays closed; if the item fails again, it is parked as a new record.',
			);
		// Being fixed by a person (or by another press of Compensate): compensate under their hold.
		if (current.status === 'being_fixed') return String(current.generation);
		// The hold is Compensate's, with its age: one whose run dies is handed back to a person.
		const [held] = await store.query<{ generation: string }>(
			holdForCompensationSql(store, {
				id: current.id,
				generation: String(current.generation),
				actor: who,
				reason: 'Compensate: reversing the steps that took effect',
				from: ALLOWED_FROM.being_fixed,
			}),
		);
		if (held) return String(held.generation);
		// Changed meanwhile (a take, another press): decide again from the record as it is now.
		[current] = await getDeadLetters(store, [current.id]);
	}
	throw new StatusChangeRefusedError(
		`Dead letter ${record.id} kept changing while Compensate tried to hold it`,
		'Get the record to see its current status and history, then compensate again.',
	);
}

/** How the audit event of a record Compensate gave back after a failed compensation begins. */
export const COMPENSATION_FAILED_REASON = 'Compensate stopped at a failed compensation';

/**
 * A compensation failed: the record goes back to new, for a person, never to replay (its newer
 * steps may be reversed already). Pressing Compensate again sends only what was not reversed.
 *
 * While Compensate held the record, a later delivery of the item may have finished its failed
 * step: that success could not close a record a person held, and this one stays open too, since
 * the person asked for the item to be reversed and what the failed compensation did is theirs to
 * check. The reason says the step has since succeeded, so they know the choice is between the
 * item standing (resolve) and its reversal (compensate again).
 */
async function releaseHold(
	store: Store,
	id: string,
	actor: string,
	generation: string,
): Promise<void> {
	const step = (await failedStepsNow(store, [id])).get(id);
	const since =
		step && stepDoneNow(step)
			? `; meanwhile its failed step (${step.step}) succeeded on a later delivery: resolve the record if the item should stand, or compensate again to reverse its steps`
			: '';
	try {
		await updateDeadLetterStatus(store, {
			id,
			to: 'new',
			actor,
			reason: `${COMPENSATION_FAILED_REASON}; what was reversed is in the history${since}`,
			expectedGeneration: generation,
		});
	} catch (error) {
		// Someone moved it meanwhile: theirs to decide.
		if (!(error instanceof StatusChangeRefusedError)) throw error;
	}
}
