import { describeValue } from '../describe';
import type { Store } from '../store';
import { armForcedTimeout, DrillRefusedError, getDrill } from './mode';
import {
	disarmTimeoutSql,
	eventLettersSql,
	eventWritesSql,
	fixAndReplaySql,
	keyRecordSql,
	letterSql,
	storeNowSql,
} from './sql';

/**
 * The fire drill: the four failure tests of the pre-launch method, run against one of the user's
 * webhook workflows with a sample payload, each judged by what the store (and, where given, the
 * destination) holds afterwards, never by what the workflow answered:
 * 1. duplicate delivery: the same payload posted twice makes each write once;
 * 2. a forced timeout after commit (the integration's drill mode): the write recovers by its key;
 * 3. a forced validation error: the payload without a required field is parked, not sent;
 * 4. a replay: that item, fixed, replayed once makes its writes once, and a second replay nothing.
 * Each test sends a new event: the payload's `$DRILL` tokens become a value of its own.
 */

export const DRILL_TOKEN = '$DRILL';

const DrillTest = {
	duplicateDelivery: 'duplicate_delivery',
	timeoutAfterCommit: 'timeout_after_commit',
	validationError: 'validation_error',
	replay: 'replay',
} as const;
type DrillTest = (typeof DrillTest)[keyof typeof DrillTest];

export const DRILL_WARNING =
	'A fire drill sends real requests to the workflow and, through it, to its targets: run it against a copy of the workflow pointed at a test target, never at production.';

export interface DrillAnswer {
	status: number;
	body: unknown;
}

/** The drill's HTTP calls (n8n's helpers in the node), answering any status. */
interface DrillHttp {
	post(url: string, body: unknown): Promise<DrillAnswer>;
	get(url: string): Promise<DrillAnswer>;
}

export interface FireDrillPlan {
	/** The production URL of the workflow's webhook. */
	webhookUrl: string;
	/** A sample of what the webhook receives, with `$DRILL` where the event's ID goes. */
	payload: Record<string, unknown>;
	/** The integration of the workflow's Idempotent HTTP Write that the forced timeout hits. */
	integration: string;
	/** The dot path of a field the workflow requires: removed for the validation test. */
	requiredField: string;
	/** A GET that lists the destination's records of the event (`$DRILL` in it): one is right. */
	verifyUrl?: string;
	/** The Replay workflow's webhook (Reliability: Replay). */
	replayUrl?: string;
	/** How long each test waits for the workflow to settle. */
	waitMs: number;
	actor: string;
}

export interface DrillTestResult {
	test: DrillTest;
	passed: boolean;
	/** What was seen, and for a failure, what to change. */
	reason: string;
	/** The event's value this test sent. */
	event: string;
	evidence: Record<string, unknown>;
}

export interface DrillDeps {
	http: DrillHttp;
	sleep?(ms: number): Promise<void>;
	now?(): number;
}

type WriteRow = {
	scope: string;
	key: string;
	fingerprint: string;
	status: string;
	attempts: number;
	last_error: string | null;
	response_status: number | null;
	execution_id: string | null;
	node: string | null;
};
type LetterRow = {
	id: string;
	status: string;
	step: string;
	error_class: string;
	error_message: string | null;
	attempts: number;
	integration: string | null;
	generation: string;
};

const TERMINAL_WRITES = ['succeeded', 'failed', 'unknown', 'compensated'];
/** An event is settled once each of its writes ended, or it was parked. */
const writesEnded = (writes: WriteRow[], letters: LetterRow[]): boolean =>
	(writes.length > 0 && writes.every((w) => TERMINAL_WRITES.includes(w.status))) ||
	letters.length > 0;
const REPLAY_PENDING = ['replay_requested', 'being_fixed'];
/** How long what a test led to must stay unchanged before it is judged. */
const QUIET_MS = 1500;
const POLL_MS = 200;

/** Checks the plan before anything is sent; names what to fix. */
function checkPlan(plan: FireDrillPlan): void {
	if (!/^https?:\/\//.test(plan.webhookUrl))
		throw new DrillRefusedError(
			`The fire drill's Webhook URL ${describeValue(plan.webhookUrl)} is not an http(s) URL`,
			"Copy the Production URL from the workflow's Webhook node (the workflow must be active).",
		);
	if (!JSON.stringify(plan.payload).includes(DRILL_TOKEN))
		throw new DrillRefusedError(
			`The fire drill's sample payload has no ${DRILL_TOKEN} token`,
			`Put ${DRILL_TOKEN} where the event's ID goes (for example "submissionId": "${DRILL_TOKEN}"): each test sends a new event, and the drill follows it by that value.`,
		);
	if (getPath(plan.payload, plan.requiredField) === undefined)
		throw new DrillRefusedError(
			`The fire drill's required field "${plan.requiredField}" is not in the sample payload`,
			'Give the dot path of a field the workflow validates at its first step (for example email or customer.id).',
		);
	if (plan.verifyUrl && !/^https?:\/\//.test(plan.verifyUrl))
		throw new DrillRefusedError(
			`The fire drill's Verify URL ${describeValue(plan.verifyUrl)} is not an http(s) URL`,
			`Give a GET that lists the destination's records of the event, with ${DRILL_TOKEN} where its ID goes, or leave it empty.`,
		);
}

/** Runs the four tests in order; the fourth replays the item the third parked. */
export async function runFireDrill(
	store: Store,
	plan: FireDrillPlan,
	deps: DrillDeps,
): Promise<DrillTestResult[]> {
	checkPlan(plan);
	const drill = new Drill(store, plan, deps);
	const results: DrillTestResult[] = [];
	results.push(await drill.duplicateDelivery());
	results.push(await drill.timeoutAfterCommit());
	const validation = await drill.validationError();
	results.push(validation.result);
	results.push(await drill.replay(validation.letter, validation.value));
	return results;
}

class Drill {
	private readonly run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
	private readonly sleep: (ms: number) => Promise<void>;
	private readonly now: () => number;

	constructor(
		private readonly store: Store,
		private readonly plan: FireDrillPlan,
		private readonly deps: DrillDeps,
	) {
		this.sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
		this.now = deps.now ?? Date.now;
	}

	private value(test: number): string {
		return `drill-${this.run}-${test}`;
	}

	private payloadFor(value: string): Record<string, unknown> {
		return substitute(this.plan.payload, value) as Record<string, unknown>;
	}

	private async storeNow(): Promise<Date> {
		const [row] = await this.store.query<{ now: Date }>(storeNowSql());
		return row.now;
	}

	private async deliver(payload: unknown, what: string): Promise<string | undefined> {
		const answer = await this.deps.http.post(this.plan.webhookUrl, payload);
		if (answer.status >= 200 && answer.status < 300) return undefined;
		return `the webhook answered ${answer.status} to ${what}${answer.status === 404 ? ' (is the workflow active, and the URL its Production URL?)' : ''}`;
	}

	/** What the event led to, once it stays unchanged for a moment (or the wait runs out). */
	private async settled(
		value: string,
		since: Date,
		done: (writes: WriteRow[], letters: LetterRow[]) => boolean,
		quietMs = QUIET_MS,
	): Promise<{ writes: WriteRow[]; letters: LetterRow[]; timedOut: boolean }> {
		const until = this.now() + this.plan.waitMs;
		let last = '';
		let stableSince = this.now();
		for (;;) {
			const writes = await this.store.query<WriteRow>(
				eventWritesSql(this.store, { event: value, since }),
			);
			const letters = await this.store.query<LetterRow>(
				eventLettersSql(this.store, { event: value, since }),
			);
			const seen = JSON.stringify([
				writes.map((w) => [w.key, w.status, w.attempts]),
				letters.map((l) => [l.id, l.status]),
			]);
			if (seen !== last) {
				last = seen;
				stableSince = this.now();
			}
			if (done(writes, letters) && this.now() - stableSince >= quietMs)
				return { writes, letters, timedOut: false };
			if (this.now() >= until) return { writes, letters, timedOut: true };
			await this.sleep(POLL_MS);
		}
	}

	/** The destination's count of the event's records, or why it could not be read. */
	private async verify(value: string): Promise<{ count?: number; problem?: string }> {
		if (!this.plan.verifyUrl) return {};
		const url = this.plan.verifyUrl.split(DRILL_TOKEN).join(encodeURIComponent(value));
		const answer = await this.deps.http.get(url);
		if (answer.status < 200 || answer.status > 299)
			return { problem: `the Verify request answered ${answer.status}` };
		const list = listOf(answer.body);
		if (!list)
			return {
				problem:
					'the Verify answer is not a list (a JSON array, or an object with data, items, results or records)',
			};
		return { count: list.length };
	}

	/** A second effect within one event: one request sent under two keys, both succeeded. */
	private static twice(writes: WriteRow[]): string | undefined {
		const byFingerprint = new Map<string, string>();
		for (const w of writes.filter((w) => w.status === 'succeeded')) {
			const other = byFingerprint.get(`${w.scope}\u0000${w.fingerprint}`);
			if (other)
				return `the same request succeeded under two keys (${other} and ${w.key}): a key built from the attempt ($execution.id, $now, a random value) makes every delivery a new effect; build it from the business operation`;
			byFingerprint.set(`${w.scope}\u0000${w.fingerprint}`, w.key);
		}
		return undefined;
	}

	private static parked(letter: LetterRow): string {
		return `the event was parked (${letter.step}: ${letter.error_class}, ${letter.error_message ?? 'no message'})`;
	}

	private unsettled(timedOut: boolean): string | undefined {
		return timedOut
			? `the event's writes had not settled within ${this.plan.waitMs / 1000} s`
			: undefined;
	}

	/** Why the destination's answer is wrong, when it holds other than one record of the event. */
	private static notOne(
		verified: { count?: number; problem?: string },
		of: string,
	): string | undefined {
		if (verified.problem) return verified.problem;
		return verified.count !== undefined && verified.count !== 1
			? `the destination holds ${verified.count} records of ${of}: one is right`
			: undefined;
	}

	private static unfinished(writes: WriteRow[]): string | undefined {
		const bad = writes.find((w) => w.status !== 'succeeded');
		if (!bad) return undefined;
		return `the write of key ${bad.key} (${bad.node ?? 'a node'}) ended ${bad.status}${bad.last_error ? `: ${bad.last_error}` : ''}`;
	}

	private result(
		test: DrillTest,
		event: string,
		problem: string | undefined,
		passed: string,
		evidence: Record<string, unknown>,
	): DrillTestResult {
		return problem === undefined
			? { test, passed: true, reason: passed, event, evidence }
			: { test, passed: false, reason: problem, event, evidence };
	}

	private writesSeen(writes: WriteRow[]): Array<Record<string, unknown>> {
		return writes.map((w) => ({
			key: w.key,
			node: w.node,
			status: w.status,
			attempts: w.attempts,
		}));
	}

	async duplicateDelivery(): Promise<DrillTestResult> {
		const value = this.value(1);
		const since = await this.storeNow();
		const payload = this.payloadFor(value);
		const refused =
			(await this.deliver(payload, 'the first delivery')) ??
			(await this.deliver(payload, 'the same payload delivered again'));
		const { writes, letters, timedOut } = await this.settled(
			value,
			since,
			(w, l) =>
				(w.length > 0 && w.every((r) => TERMINAL_WRITES.includes(r.status))) || l.length > 0,
		);
		const verified = await this.verify(value);
		const problem =
			refused ??
			(letters.length > 0
				? `${Drill.parked(letters[0])}; the drill needs a payload the workflow completes`
				: undefined) ??
			(writes.length === 0
				? `no write of the event reached the reliability store within ${this.plan.waitMs / 1000} s: the workflow's writes go around Idempotent HTTP Write, or their keys do not carry the event's ID (build them from the business operation)`
				: undefined) ??
			this.unsettled(timedOut) ??
			Drill.unfinished(writes) ??
			Drill.twice(writes) ??
			Drill.notOne(verified, 'the event after two deliveries');
		return this.result(
			DrillTest.duplicateDelivery,
			value,
			problem,
			`Delivered twice: ${writes.length} write${writes.length === 1 ? '' : 's'}, each made once${verified.count === 1 ? '; the destination holds one record' : ''}.`,
			{ writes: this.writesSeen(writes), destinationRecords: verified.count },
		);
	}

	async timeoutAfterCommit(): Promise<DrillTestResult> {
		const value = this.value(2);
		const integration = this.plan.integration;
		let armed = false;
		try {
			await armForcedTimeout(this.store, {
				integration,
				actor: this.plan.actor,
				reason: `fire drill ${this.run}: timeout after commit of event ${value}`,
				event: value,
				forMs: this.plan.waitMs + 30_000,
			});
			armed = true;
		} catch (error) {
			if (!(error instanceof DrillRefusedError)) throw error;
			return this.result(
				DrillTest.timeoutAfterCommit,
				value,
				`${error.message}: ${error.hint}`,
				'',
				{},
			);
		}
		try {
			const since = await this.storeNow();
			const refused = await this.deliver(this.payloadFor(value), 'the delivery');
			const { writes, letters, timedOut } = await this.settled(value, since, writesEnded);
			const drill = await getDrill(this.store, integration);
			const fired =
				drill?.firedAt && drill.firedAt >= since && drill.firedKey?.includes(value)
					? drill
					: undefined;
			const record = fired
				? (
						await this.store.query<WriteRow>(
							keyRecordSql(this.store, { scope: fired.firedScope, key: fired.firedKey }),
						)
					)[0]
				: undefined;
			const verified = await this.verify(value);
			const problem =
				refused ??
				(fired
					? undefined
					: `the forced timeout never fired: no Idempotent HTTP Write of integration ${integration} had a write accepted for this event within ${this.plan.waitMs / 1000} s. A write made another way (an HTTP Request node, Retry On Fail) cannot recover a timeout after commit by its key: make it an Idempotent HTTP Write with integration ${integration}, its key built from the event's ID`) ??
				(record && record.status !== 'succeeded'
					? `the write of key ${record.key} ended ${record.status}${record.last_error ? ` (${record.last_error})` : ''} after its answer was lost: set its On Unknown Outcome to Retry With the Same Key (when the target honours Idempotency-Key) or Reconcile by Lookup, so a timeout after commit completes without a person`
					: undefined) ??
				(letters.length > 0 ? Drill.parked(letters[0]) : undefined) ??
				this.unsettled(timedOut) ??
				Drill.unfinished(writes) ??
				Drill.twice(writes) ??
				Drill.notOne(verified, 'the event after the lost answer');
			return this.result(
				DrillTest.timeoutAfterCommit,
				value,
				problem,
				`The target's answer to key ${record?.key} was discarded after it committed; the write recovered with the same key (${record?.attempts} attempts)${verified.count === 1 ? ' and the destination holds one record' : ' (no Verify URL: the destination was not checked for a second effect)'}.`,
				{
					firedKey: fired?.firedKey ?? null,
					record: record ? this.writesSeen([record])[0] : null,
					writes: this.writesSeen(writes),
					destinationRecords: verified.count,
				},
			);
		} finally {
			if (armed)
				await this.store.query(
					disarmTimeoutSql(this.store, {
						integration,
						actor: this.plan.actor,
						reason: `fire drill ${this.run} ended`,
						event: value,
					}),
				);
		}
	}

	async validationError(): Promise<{
		result: DrillTestResult;
		letter?: LetterRow;
		value: string;
	}> {
		const value = this.value(3);
		const field = this.plan.requiredField;
		const since = await this.storeNow();
		const payload = this.payloadFor(value);
		removePath(payload, field);
		// Any answer will do: a workflow may refuse the input with a 4xx, or accept and park it.
		await this.deps.http.post(this.plan.webhookUrl, payload);
		const { writes, letters } = await this.settled(value, since, (_w, l) => l.length > 0);
		const letter = letters[0];
		const verified = await this.verify(value);
		const retried = writes.find((w) => w.attempts > 1);
		const problem =
			(letter
				? undefined
				: `nothing was parked for the event without ${field} within ${this.plan.waitMs / 1000} s: validate the input at the first step (Event Dedupe's Validate) and park what fails, so a person can fix it`) ??
			(letter && !['invalid', 'permanent'].includes(letter.error_class)
				? `the event without ${field} was parked as ${letter.error_class} after ${letter.attempts} attempt${letter.attempts === 1 ? '' : 's'}: a validation error is permanent and must not be retried; validate at the first step`
				: undefined) ??
			(retried
				? `the write of key ${retried.key} was sent ${retried.attempts} times for an invalid event: only transient failures are retried`
				: undefined) ??
			verified.problem ??
			(verified.count
				? `the destination holds ${verified.count} records of an invalid event`
				: undefined);
		return {
			result: this.result(
				DrillTest.validationError,
				value,
				problem,
				`The event without ${field} was parked as ${letter?.error_class} (dead letter ${letter?.id}, ${letter?.step}), not retried${verified.count === 0 ? '; the destination holds nothing of it' : ''}.`,
				{
					deadLetterId: letter?.id ?? null,
					errorClass: letter?.error_class ?? null,
					message: letter?.error_message ?? null,
					writes: this.writesSeen(writes),
					destinationRecords: verified.count,
				},
			),
			letter,
			value,
		};
	}

	/** Replays through the Replay workflow's webhook and waits for the letter to leave replay. */
	private async replayOnce(id: string): Promise<{ status: string; problem?: string }> {
		const answer = await this.deps.http.post(this.plan.replayUrl!, {});
		if (answer.status < 200 || answer.status > 299)
			return { status: '?', problem: `the Replay webhook answered ${answer.status}` };
		const until = this.now() + this.plan.waitMs;
		for (;;) {
			const [row] = await this.store.query<{ status: string }>(letterSql(this.store, { id }));
			if (!row) return { status: 'gone', problem: `dead letter ${id} is gone` };
			if (!REPLAY_PENDING.includes(row.status)) return { status: row.status };
			if (this.now() >= until)
				return {
					status: row.status,
					problem: `dead letter ${id} was still ${row.status} after ${this.plan.waitMs / 1000} s: is Reliability: Replay active, and the Replay URL its webhook?`,
				};
			await this.sleep(POLL_MS);
		}
	}

	async replay(letter: LetterRow | undefined, value: string): Promise<DrillTestResult> {
		const fail = (problem: string, evidence: Record<string, unknown> = {}) =>
			this.result(DrillTest.replay, value, problem, '', evidence);
		if (!letter)
			return fail('there is no parked item to replay: the validation test parked nothing');
		if (!this.plan.replayUrl)
			return fail('no Replay URL was given: set it to the webhook of Reliability: Replay');
		const [row] = await this.store.query<{ payload: unknown }>(
			letterSql(this.store, { id: letter.id }),
		);
		const fixed = restoreField(row?.payload, this.plan.requiredField, this.payloadFor(value));
		const since = await this.storeNow();
		const changed = await this.store.query(
			fixAndReplaySql(this.store, {
				id: letter.id,
				payload: fixed,
				fromStatuses: ['new', 'being_fixed'],
				actor: this.plan.actor,
				reason: `fire drill ${this.run}: ${this.plan.requiredField} put back, replay requested`,
			}),
		);
		if (changed.length === 0)
			return fail(
				`dead letter ${letter.id} was changed by someone else before the drill could fix it`,
			);
		const first = await this.replayOnce(letter.id);
		const afterFirst = await this.store.query<WriteRow>(
			eventWritesSql(this.store, { event: value, since }),
		);
		const verifiedFirst = await this.verify(value);
		const firstProblem =
			first.problem ??
			(first.status !== 'replayed'
				? `the fixed item's replay ended ${first.status}, not replayed: see dead letter ${letter.id}'s history`
				: undefined) ??
			(afterFirst.length === 0
				? "the replay made no write the drill could follow: the workflow's keys do not carry the event's ID, or its replay path goes around Idempotent HTTP Write"
				: undefined) ??
			Drill.unfinished(afterFirst) ??
			Drill.twice(afterFirst) ??
			Drill.notOne(verifiedFirst, 'the replayed event');
		if (firstProblem)
			return fail(firstProblem, { deadLetterId: letter.id, writes: this.writesSeen(afterFirst) });

		// Run again as a Replay run that died after the re-run and before marking it would leave it:
		// back in replay, the same fixed item. The letter is the drill's own event's.
		const again = await this.store.query(
			fixAndReplaySql(this.store, {
				id: letter.id,
				payload: fixed,
				fromStatuses: ['replayed'],
				actor: this.plan.actor,
				reason: `fire drill ${this.run}: replayed again, as a Replay run that died before marking it would; it must add nothing`,
			}),
		);
		if (again.length === 0)
			return fail(`dead letter ${letter.id} was changed by someone else before the second replay`);
		const second = await this.replayOnce(letter.id);
		const afterSecond = await this.store.query<WriteRow>(
			eventWritesSql(this.store, { event: value, since }),
		);
		const before = new Map(afterFirst.map((w) => [`${w.scope}\u0000${w.key}`, w]));
		const added = afterSecond.find((w) => {
			const was = before.get(`${w.scope}\u0000${w.key}`);
			return !was || was.attempts !== w.attempts || was.status !== w.status;
		});
		const verifiedSecond = await this.verify(value);
		const problem =
			second.problem ??
			(second.status !== 'replayed'
				? `the second replay ended ${second.status}, not replayed: see dead letter ${letter.id}'s history`
				: undefined) ??
			(added
				? `the second replay sent the write of key ${added.key} again (now ${added.status}, ${added.attempts} attempts): a replay of done work must be answered from the saved response`
				: undefined) ??
			Drill.notOne(verifiedSecond, 'the event after a second replay');
		return this.result(
			DrillTest.replay,
			value,
			problem,
			`Fixed (${this.plan.requiredField} put back) and replayed: ${afterFirst.length} write${afterFirst.length === 1 ? '' : 's'}, each made once; a second replay added nothing${verifiedSecond.count === 1 ? ', and the destination holds one record' : ''}.`,
			{
				deadLetterId: letter.id,
				writes: this.writesSeen(afterSecond),
				destinationRecords: verifiedSecond.count,
			},
		);
	}
}

/** Every string with the token replaced by the event's value, deeply. */
function substitute(value: unknown, event: string): unknown {
	if (typeof value === 'string') return value.split(DRILL_TOKEN).join(event);
	if (Array.isArray(value)) return value.map((v) => substitute(v, event));
	if (value !== null && typeof value === 'object')
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, event)]));
	return value;
}

function getPath(value: unknown, path: string): unknown {
	let at: unknown = value;
	for (const part of path.split('.')) {
		if (at === null || typeof at !== 'object') return undefined;
		at = (at as Record<string, unknown>)[part];
	}
	return at;
}

function removePath(value: Record<string, unknown>, path: string): void {
	const parts = path.split('.');
	const parent = getPath(value, parts.slice(0, -1).join('.')) ?? value;
	if (parts.length === 1) delete value[parts[0]];
	else if (parent && typeof parent === 'object')
		delete (parent as Record<string, unknown>)[parts[parts.length - 1]];
}

function setPath(value: Record<string, unknown>, path: string, field: unknown): void {
	const parts = path.split('.');
	let at = value;
	for (const part of parts.slice(0, -1)) {
		if (at[part] === null || typeof at[part] !== 'object') at[part] = {};
		at = at[part] as Record<string, unknown>;
	}
	at[parts[parts.length - 1]] = field;
}

/**
 * The parked payload with the removed field put back: where the workflow parked n8n's webhook
 * item (headers, query, body), under its body; else where the sample has it.
 */
function restoreField(
	parked: unknown,
	path: string,
	original: Record<string, unknown>,
): Record<string, unknown> {
	const payload =
		parked !== null && typeof parked === 'object' && !Array.isArray(parked)
			? (structuredClone(parked) as Record<string, unknown>)
			: {};
	const body = payload.body;
	const target =
		body !== null &&
		typeof body === 'object' &&
		!Array.isArray(body) &&
		getPath(payload, path) === undefined
			? (body as Record<string, unknown>)
			: payload;
	setPath(target, path, getPath(original, path));
	return payload;
}

/** A destination's answer as a list of records. */
function listOf(body: unknown): unknown[] | undefined {
	if (Array.isArray(body)) return body;
	if (body !== null && typeof body === 'object') {
		for (const name of ['data', 'items', 'results', 'records']) {
			const list = (body as Record<string, unknown>)[name];
			if (Array.isArray(list)) return list;
		}
	}
	return undefined;
}
