import { parkItems, type ParkRequest, type ParkResult } from '../deadletter/park';
import { updateDeadLetterStatuses } from '../deadletter/status';
import { type AttemptEntry } from '../idempotency/types';
import type { Store } from '../store';
import {
	markParkedSql,
	openWriteLettersOfItemSql,
	runsOfItemSql,
	takeAlertedIssueSql,
} from './sql';

/**
 * The letters of items the inbox kept, parked by whoever settles their execution (its
 * end-of-execution hook, the Error handler, Recover giving an item up): one letter per item.
 * When one item is parked, the letters write steps had parked for it in the runs that held it
 * alone (an outcome unknown at a stop, a failure parked before the run failed or died, in this
 * run or an earlier delivery's) are folded into the item's letter:
 * what they said goes into it, and they close, pointing at it. So an item has one open letter
 * and one alert, naming what its steps did. When a folded letter was alerted already (a write's
 * Failed output parked and alerted, then the run was stopped or failed later), the item's letter
 * takes that alert's issue and none is due for it: `alreadyAlerted`, which the callers do not
 * send to the Alert workflow again.
 */
export async function parkKeptItems(
	store: Store,
	requests: ParkRequest[],
	of: {
		/** The execution whose end parks them (its write letters fold too, when it kept one item). */
		executionId?: string;
		/** The claims these letters hold, in the same order: marked parked once they are (if failed). */
		claims?: Array<{ consumer: string; eventId: string }>;
		/** False when the caller marks the claims itself (it fails them after the park). */
		mark?: boolean;
	} = {},
): Promise<KeptLetter[]> {
	const folded = requests.length === 1 ? await writeLettersOf(store, of) : [];
	const alertedIn = folded.find((w) => w.issue_id !== null)?.issue_id ?? undefined;
	// A request the store refuses is parked with what fits; one refused even so throws.
	const parked = (
		await parkEachPlainIfRefused(
			store,
			folded.length === 0
				? requests
				: [{ ...withWrites(requests[0], folded), ...(alertedIn ? { alertLater: false } : {}) }],
		)
	).map(({ request, result }): KeptLetter => {
		if (!result) throw new Error(`the letter of ${request.idempotencyKey} could not be parked`);
		return result;
	});
	if (of.mark !== false && of.claims && of.claims.length > 0)
		await store.execute(
			markParkedSql(store, {
				consumers: of.claims.map((c) => c.consumer),
				eventIds: of.claims.map((c) => c.eventId),
			}),
		);
	// Before the write letters close, so their issue never stands without an open letter.
	if (alertedIn !== undefined) {
		const took = await store.query(
			takeAlertedIssueSql(store, { id: parked[0].id, issueId: String(alertedIn) }),
		);
		if (took.length > 0) parked[0] = { ...parked[0], alreadyAlerted: true };
	}
	if (folded.length > 0)
		await updateDeadLetterStatuses(
			store,
			folded.map((w) => String(w.id)),
			{
				to: 'resolved',
				actor: 'Event Dedupe',
				reason: `folded into dead letter ${parked[0].id}, the letter of its item${requests[0].businessId ? ` (event ${requests[0].businessId})` : ''}: replay or resolve the item there`,
			},
		);
	return parked;
}

/** The write letters of the one item being parked: of its claim's runs, and of the settling run. */
async function writeLettersOf(
	store: Store,
	of: { executionId?: string; claims?: Array<{ consumer: string; eventId: string }> },
): Promise<WriteLetter[]> {
	const claim = of.claims?.length === 1 ? of.claims[0] : undefined;
	const runs = new Set(of.executionId === undefined ? [] : [of.executionId]);
	if (claim)
		for (const row of await store.query<{ runs: string[] }>(runsOfItemSql(store, claim)))
			for (const run of row.runs) runs.add(run);
	if (runs.size === 0) return [];
	return await store.query<WriteLetter>(
		openWriteLettersOfItemSql(store, { executions: [...runs] }),
	);
}

/** An item's letter as parked; `alreadyAlerted` when it took a folded write letter's alert. */
export type KeptLetter = ParkResult & { alreadyAlerted?: true };

/** An open letter a write step of the execution parked, and the issue it was alerted in. */
interface WriteLetter {
	id: string;
	step: string;
	error_class: string;
	error_message: string | null;
	integration: string | null;
	attempt_history: AttemptEntry[] | null;
	issue_id: string | null;
}

/** The item's letter with what each folded write letter said of its step. */
function withWrites(request: ParkRequest, writes: WriteLetter[]): ParkRequest {
	const said = writes.map(
		(w) => `${w.step}: ${w.error_class}${w.error_message ? ` (${w.error_message})` : ''}`,
	);
	return {
		...request,
		alreadyHappened: [request.alreadyHappened, ...said].filter(Boolean).join('; '),
		// The write's integration: its pause holds the item, its resume releases it.
		integration: request.integration ?? writes.find((w) => w.integration)?.integration ?? undefined,
		attemptHistory: [
			...(request.attemptHistory ?? []),
			...writes.flatMap((w) => w.attempt_history ?? []),
		],
	};
}

/**
 * Parks each request; one the store refuses (a field it cannot hold, such as a node name longer
 * than its column) is parked again with what is sure to fit, saying why, so one item never keeps
 * the others of its batch, or itself, out of a letter. One refused even so is left out: the next
 * sweep tries it again.
 */
export async function parkEachPlainIfRefused(
	store: Store,
	requests: ParkRequest[],
): Promise<Array<{ request: ParkRequest; result?: ParkResult }>> {
	const outcomes = await parkItems(store, requests);
	const plain = outcomes.flatMap((outcome, i) =>
		outcome.refused === undefined
			? []
			: [
					{
						at: i,
						request: {
							...requests[i],
							workflowId: requests[i].workflowId.slice(0, 100),
							step: 'unknown step',
							runLink: undefined,
							errorMessage: `${requests[i].errorMessage ?? 'its execution failed'} (the letter could not keep all it knew: ${outcome.refused.message})`,
						},
					},
				],
	);
	const again =
		plain.length === 0
			? []
			: await parkItems(
					store,
					plain.map((p) => p.request),
				);
	const retried = new Map(plain.map((p, j) => [p.at, { request: p.request, outcome: again[j] }]));
	return outcomes.map((outcome, i) => {
		if (outcome.refused === undefined) return { request: requests[i], result: outcome };
		const retry = retried.get(i)!;
		return retry.outcome.refused === undefined
			? { request: retry.request, result: retry.outcome }
			: { request: requests[i] };
	});
}
