import { closeSucceededDeadLetters, type ParkRequest, parkItems } from '../deadletter';
import { StoreUnavailableError } from '../errors';
import { isPaused } from '../control/pauses';
import type { Store } from '../store';
import { classifyStatus, decideRetry, parseRetryAfter, type RetryPolicy } from './policy';
import {
	breakerOpenSql,
	claimKeysSql,
	readKeySql,
	recordBreakerSql,
	settleKeysSql,
	takeOverSql,
} from './sql';

/**
 * One run of the Idempotent HTTP Write, free of n8n: claim every key in one statement, then per
 * item (with bounded concurrency) replay, wait, reconcile, refuse or send with retries; settle
 * all records in one statement and park all failures in one more. The HTTP call itself is
 * injected, so n8n's helpers (and any credential type) make it.
 */
export type UnknownOutcomeStrategy = 'retry' | 'lookup' | 'park';

export interface WriteRequest {
	index: number;
	scope: string;
	key: string;
	fingerprint: string;
	/** Payload parked with a failure (the input item). */
	payload: unknown;
}

export interface HttpAnswer {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: unknown;
}

export type SendResult =
	| { kind: 'response'; answer: HttpAnswer }
	| { kind: 'not_sent' | 'lost'; code: string; message: string };

export type LookupResult =
	| { kind: 'exists'; answer: HttpAnswer }
	| { kind: 'absent' }
	| { kind: 'conflict'; message: string };

export interface WriteContext {
	workflowId?: string;
	workflowName?: string;
	executionId: string;
	node: string;
	runLink?: string;
	integration?: string;
	retentionDays: number;
	policy: RetryPolicy;
	onUnknown: UnknownOutcomeStrategy;
	concurrency: number;
	/** Largest response body saved for replays, in characters. */
	maxSavedBodyChars: number;
	/** Park failures in the dead-letter store (false: route only). */
	park: boolean;
	owner?: string;
	impact?: string;
	alreadyHappened?: string;
	breaker?: { threshold: number; coolDownSeconds: number };
}

export interface WriteDeps {
	send(request: WriteRequest, attempt: number): Promise<SendResult>;
	lookup?(request: WriteRequest): Promise<LookupResult>;
	sleep?(ms: number): Promise<void>;
	now?(): number;
	random?(): number;
}

export type FailureClass =
	'permanent' | 'exhausted' | 'rate_limited' | 'conflict' | 'unknown_outcome' | 'paused';

export interface WriteOutcome {
	index: number;
	key: string;
	ok: boolean;
	replayed: boolean;
	attempts: number;
	durationMs: number;
	answer?: HttpAnswer;
	failure?: {
		class: FailureClass;
		status?: number;
		message: string;
		retryAt?: Date;
		deadLetterId?: string;
	};
}

type KeyRow = {
	status: 'in_progress' | 'succeeded' | 'failed' | null;
	fingerprint: string | null;
	lease_expired: boolean | null;
	response_status: number | null;
	response_headers: Record<string, string> | null;
	response_body: string | null;
	attempts: number | null;
};

type Settlement = {
	scope: string;
	key: string;
	outcome: 'succeeded' | 'failed' | 'unknown';
	attempts: number;
	response_status?: number;
	response_headers?: unknown;
	response_body?: string;
	response_truncated?: boolean;
	last_error?: string;
};

const SAVED_HEADERS = [
	'content-type',
	'location',
	'etag',
	'last-modified',
	'idempotency-key',
	'idempotent-replayed',
	'x-request-id',
];

/** The target's own words from an error response: a message field of a JSON body, else the text. */
export function targetMessage(answer: HttpAnswer): string {
	const body = answer.body;
	if (body && typeof body === 'object') {
		const b = body as Record<string, unknown>;
		for (const field of ['message', 'error_description', 'detail', 'error', 'title']) {
			const value = b[field];
			if (typeof value === 'string' && value) return value;
			if (
				value &&
				typeof value === 'object' &&
				typeof (value as { message?: unknown }).message === 'string'
			)
				return (value as { message: string }).message;
		}
		return JSON.stringify(body).slice(0, 500);
	}
	return typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${answer.status}`;
}

function savedResponse(
	answer: HttpAnswer,
	maxChars: number,
): Pick<
	Settlement,
	'response_status' | 'response_headers' | 'response_body' | 'response_truncated'
> {
	const headers: Record<string, string> = {};
	for (const name of SAVED_HEADERS) {
		const value = answer.headers[name];
		if (value !== undefined)
			headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? null);
	return {
		response_status: answer.status,
		response_headers: headers,
		response_body: text.slice(0, maxChars),
		response_truncated: text.length > maxChars,
	};
}

function fromSaved(row: KeyRow): HttpAnswer {
	const text = row.response_body ?? 'null';
	let body: unknown = text;
	try {
		body = JSON.parse(text);
	} catch {
		/* a text body stays text */
	}
	return { status: row.response_status ?? 200, headers: row.response_headers ?? {}, body };
}

/** Runs `work` over `items` with at most `limit` at once, keeping results in input order. */
async function mapLimited<T, R>(
	items: T[],
	limit: number,
	work: (item: T) => Promise<R>,
): Promise<R[]> {
	const results = new Array<R>(items.length);
	let next = 0;
	const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
		while (next < items.length) {
			const at = next++;
			results[at] = await work(items[at]);
		}
	});
	await Promise.all(lanes);
	return results;
}

export async function runWrites(
	store: Store,
	context: WriteContext,
	requests: WriteRequest[],
	deps: WriteDeps,
): Promise<WriteOutcome[]> {
	const progress = { sent: 0 };
	try {
		return await writeAll(store, context, requests, deps, progress);
	} catch (error) {
		// The store failing mid-run: say whether requests had gone out, since that decides what a
		// person may assume. Their keys make a redelivery safe either way.
		if (!(error instanceof StoreUnavailableError)) throw error;
		const hint =
			progress.sent === 0
				? `${error.hint ?? ''} Nothing was sent.`
				: `${error.hint ?? ''} ${progress.sent} request${progress.sent === 1 ? ' had' : 's had'} been sent when the store failed, so some may have taken effect; their idempotency keys make a redelivery safe: deliver the items again once the store is back (a write that was in flight is taken over when its lease, deadline + 30 s, ends).`;
		throw new StoreUnavailableError(error.message, hint.trim(), { cause: error.cause ?? error });
	}
}

async function writeAll(
	store: Store,
	context: WriteContext,
	requests: WriteRequest[],
	deps: WriteDeps,
	progress: { sent: number },
): Promise<WriteOutcome[]> {
	const sleep =
		deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
	const now = deps.now ?? Date.now;
	const random = deps.random ?? Math.random;
	const policy = context.policy;
	const leaseSeconds = Math.ceil(policy.deadlineMs / 1000) + 30;
	const settlements: Settlement[] = [];
	const parked: Array<{ outcome: WriteOutcome; request: WriteRequest }> = [];

	// A paused integration or an open breaker: hold every item, call nothing.
	if (context.integration) {
		const pause = await isPaused(store, 'integration', context.integration);
		const breaker = pause
			? []
			: await store.query<{ open_until: Date }>(breakerOpenSql(store), [context.integration]);
		if (pause || breaker.length > 0) {
			const message = pause
				? `integration ${context.integration} is paused by ${pause.changedBy}: ${pause.reason ?? ''}`.trim()
				: `circuit breaker for ${context.integration} is open until ${breaker[0].open_until.toISOString()}`;
			const outcomes = requests.map((r) => ({
				index: r.index,
				key: r.key,
				ok: false,
				replayed: false,
				attempts: 0,
				durationMs: 0,
				failure: { class: 'paused' as const, message },
			}));
			await parkFailures(
				store,
				context,
				outcomes.map((outcome, i) => ({ outcome, request: requests[i] })),
				'held',
			);
			return outcomes;
		}
	}

	// Duplicate keys inside the run: the first occurrence does the work, the others share it.
	const firstByKey = new Map<string, WriteRequest>();
	for (const r of requests)
		if (!firstByKey.has(`${r.scope}\u0000${r.key}`)) firstByKey.set(`${r.scope}\u0000${r.key}`, r);
	const leaders = [...firstByKey.values()];
	const claimRows = await store.query<KeyRow & { ord: number; claimed: boolean }>(
		claimKeysSql(store),
		[
			JSON.stringify(
				leaders.map((r, ord) => ({ ord, scope: r.scope, key: r.key, fingerprint: r.fingerprint })),
			),
			leaseSeconds,
			context.workflowId ?? null,
			context.executionId,
			context.node,
			context.retentionDays,
		],
	);
	const claimByOrd = new Map(claimRows.map((row) => [row.ord, row]));

	let transientFailures = 0;
	let successes = 0;

	const failRun = (
		request: WriteRequest,
		started: number,
		attempts: number,
		failure: NonNullable<WriteOutcome['failure']>,
		settle?: Settlement['outcome'],
		error?: string,
	): WriteOutcome => {
		if (settle)
			settlements.push({
				scope: request.scope,
				key: request.key,
				outcome: settle,
				attempts,
				last_error: error ?? failure.message,
				response_status: failure.status,
			});
		const outcome: WriteOutcome = {
			index: request.index,
			key: request.key,
			ok: false,
			replayed: false,
			attempts,
			durationMs: now() - started,
			failure,
		};
		parked.push({ outcome, request });
		return outcome;
	};

	const succeed = (
		request: WriteRequest,
		started: number,
		attempts: number,
		answer: HttpAnswer,
	): WriteOutcome => {
		successes++;
		settlements.push({
			scope: request.scope,
			key: request.key,
			outcome: 'succeeded',
			attempts,
			...savedResponse(answer, context.maxSavedBodyChars),
		});
		return {
			index: request.index,
			key: request.key,
			ok: true,
			replayed: false,
			attempts,
			durationMs: now() - started,
			answer,
		};
	};

	/** The send loop of a record this run owns: retries transient failures inside the deadline. */
	const sendOwned = async (request: WriteRequest, started: number): Promise<WriteOutcome> => {
		let attempt = 0;
		// An attempt whose response was lost after it was sent may have taken effect; a later
		// attempt's failure does not undo that, so the run then ends unknown, never failed.
		let lostEarlier = false;
		const fail = (
			req: WriteRequest,
			at: number,
			attempts: number,
			failure: NonNullable<WriteOutcome['failure']>,
			settle: Settlement['outcome'],
		): WriteOutcome => {
			if (!lostEarlier || settle !== 'failed') return failRun(req, at, attempts, failure, settle);
			const message = `${failure.message}; an earlier attempt's response was lost after it was sent, so the effect may exist: check the target before replaying`;
			return failRun(
				req,
				at,
				attempts,
				{ ...failure, class: 'unknown_outcome', message },
				'unknown',
			);
		};
		for (;;) {
			attempt++;
			progress.sent++;
			const result = await deps.send(request, attempt);
			if (result.kind === 'lost') lostEarlier = true;
			if (result.kind === 'response') {
				const answerClass = classifyStatus(result.answer.status, policy);
				if (answerClass === 'success') return succeed(request, started, attempt, result.answer);
				const message = targetMessage(result.answer);
				if (answerClass === 'permanent')
					return fail(
						request,
						started,
						attempt,
						{ class: 'permanent', status: result.answer.status, message },
						'failed',
					);
				transientFailures++;
				const decision = decideRetry(
					{
						attempt,
						startedAtMs: started,
						nowMs: now(),
						retryAfterMs: parseRetryAfter(result.answer.headers['retry-after'], now()),
					},
					policy,
					random,
				);
				if (decision.kind === 'retry') {
					await sleep(decision.delayMs);
					continue;
				}
				if (decision.kind === 'rate_limited') {
					return fail(
						request,
						started,
						attempt,
						{
							class: 'rate_limited',
							status: result.answer.status,
							message: `${message}; the target asks to retry at ${decision.retryAt.toISOString()}`,
							retryAt: decision.retryAt,
						},
						'failed',
					);
				}
				return fail(
					request,
					started,
					attempt,
					{
						class: 'exhausted',
						status: result.answer.status,
						message: `${message} (${decision.reason})`,
					},
					'failed',
				);
			}
			if (result.kind === 'lost' && context.onUnknown !== 'retry') {
				if (context.onUnknown === 'lookup' && deps.lookup) {
					const found = await reconcile(request, started, attempt);
					if (found) return found;
					continue;
				}
				return fail(
					request,
					started,
					attempt,
					{
						class: 'unknown_outcome',
						message: `response lost after the request was sent (${result.code}): the effect may exist; check the target before replaying`,
					},
					'unknown',
				);
			}
			// Not sent (safe), or lost with "retry with the same key" (the target dedupes by key).
			transientFailures++;
			const decision = decideRetry({ attempt, startedAtMs: started, nowMs: now() }, policy, random);
			if (decision.kind === 'retry') {
				await sleep(decision.delayMs);
				continue;
			}
			// Nothing reached the target: a definite failure. A lost response: the effect may exist.
			const settle = result.kind === 'lost' ? 'unknown' : 'failed';
			return fail(
				request,
				started,
				attempt,
				{
					class: settle === 'unknown' ? 'unknown_outcome' : 'exhausted',
					message: `${result.message} (${decision.kind === 'exhausted' ? decision.reason : 'deadline'})`,
				},
				settle,
			);
		}
	};

	/** Reconcile by lookup: exists -> success with the found resource; absent -> undefined (send); conflict -> park. */
	const reconcile = async (
		request: WriteRequest,
		started: number,
		attempts: number,
	): Promise<WriteOutcome | undefined> => {
		const found = await deps.lookup!(request);
		if (found.kind === 'exists') {
			const outcome = succeed(request, started, attempts, found.answer);
			return { ...outcome, replayed: true };
		}
		if (found.kind === 'conflict')
			return failRun(
				request,
				started,
				attempts,
				{
					class: 'unknown_outcome',
					message: `reconcile found a conflicting record: ${found.message}`,
				},
				'unknown',
			);
		return undefined;
	};

	const handleLeader = async (request: WriteRequest, ord: number): Promise<WriteOutcome> => {
		const started = now();
		let row = claimByOrd.get(ord)!;
		if (row.claimed) return await sendOwned(request, started);

		for (;;) {
			if (row.status === 'succeeded') {
				if (row.fingerprint !== request.fingerprint)
					return failRun(request, started, 0, {
						class: 'conflict',
						message: `key ${request.key} already succeeded with a different request; a key must always carry the same request`,
					});
				return {
					index: request.index,
					key: request.key,
					ok: true,
					replayed: true,
					attempts: row.attempts ?? 0,
					durationMs: now() - started,
					answer: fromSaved(row),
				};
			}
			if (
				row.status === 'in_progress' &&
				!row.lease_expired &&
				row.fingerprint !== null &&
				row.fingerprint !== request.fingerprint
			) {
				return failRun(request, started, 0, {
					class: 'conflict',
					message: `key ${request.key} is being written by another execution with a different request`,
				});
			}
			if (row.status === 'in_progress' && row.lease_expired) {
				// A worker died mid-call, or an earlier response was lost: the effect may exist.
				if (context.onUnknown === 'park')
					return failRun(request, started, 0, {
						class: 'unknown_outcome',
						message: `an earlier attempt on key ${request.key} ended without an answer: the effect may exist; check the target, then replay`,
					});
				if (context.onUnknown === 'lookup' && deps.lookup) {
					const found = await reconcile(request, started, 0);
					if (found) return found;
				}
				const taken = await store.query(takeOverSql(store), [
					request.scope,
					request.key,
					request.fingerprint,
					leaseSeconds,
					context.executionId,
				]);
				if (taken.length > 0) return await sendOwned(request, started);
			} else if (row.status === 'failed' || row.status === null) {
				// Failed meanwhile (claimable again) or vanished: claim it for this run.
				const [again] = await store.query<KeyRow & { ord: number; claimed: boolean }>(
					claimKeysSql(store),
					[
						JSON.stringify([
							{ ord: 0, scope: request.scope, key: request.key, fingerprint: request.fingerprint },
						]),
						leaseSeconds,
						context.workflowId ?? null,
						context.executionId,
						context.node,
						context.retentionDays,
					],
				);
				if (again.claimed) return await sendOwned(request, started);
				row = again;
				continue;
			}
			// In progress elsewhere under a live lease: wait for its result until the deadline.
			if (now() - started >= policy.deadlineMs) {
				return failRun(request, started, 0, {
					class: 'unknown_outcome',
					message: `key ${request.key} was still in progress elsewhere when the deadline of ${Math.round(policy.deadlineMs / 1000)} s was reached`,
				});
			}
			await sleep(Math.min(1_000, 100 + Math.floor(random() * 200)));
			const [fresh] = await store.query<KeyRow>(readKeySql(store), [request.scope, request.key]);
			row = {
				...(fresh ?? {
					status: null,
					fingerprint: null,
					lease_expired: null,
					response_status: null,
					response_headers: null,
					response_body: null,
					attempts: null,
				}),
				ord,
				claimed: false,
			};
		}
	};

	const leaderOutcomes = await mapLimited(
		leaders.map((request, ord) => ({ request, ord })),
		context.concurrency,
		({ request, ord }) => handleLeader(request, ord),
	);
	const byKey = new Map(
		leaders.map((r, i) => [`${r.scope}\u0000${r.key}`, { request: r, outcome: leaderOutcomes[i] }]),
	);

	const outcomes = requests.map((request) => {
		const lead = byKey.get(`${request.scope}\u0000${request.key}`)!;
		if (lead.request === request) return lead.outcome;
		const started = now();
		if (lead.request.fingerprint !== request.fingerprint)
			return failRun(request, started, 0, {
				class: 'conflict',
				message: `key ${request.key} appears twice in this run with different requests`,
			});
		if (!lead.outcome.ok)
			return failRun(request, started, 0, { ...lead.outcome.failure!, deadLetterId: undefined });
		return { ...lead.outcome, index: request.index, replayed: true, durationMs: 0 };
	});

	if (settlements.length > 0)
		await store.query(settleKeysSql(store), [JSON.stringify(settlements), context.executionId]);
	if (context.integration && context.breaker && (transientFailures > 0 || successes > 0)) {
		await store.query(recordBreakerSql(store), [
			context.integration,
			successes > 0 && transientFailures === 0,
			transientFailures,
			context.breaker.threshold,
			context.breaker.coolDownSeconds,
		]);
	}
	if (context.park) await parkFailures(store, context, parked, 'new');
	// An item parked by an earlier delivery that has now succeeded is done: close its record.
	const succeededKeys = [...new Set(outcomes.filter((o) => o.ok).map((o) => o.key))];
	if (succeededKeys.length > 0) {
		await closeSucceededDeadLetters(store, {
			workflowId: context.workflowId ?? 'unsaved',
			step: context.node,
			keys: succeededKeys,
			actor: 'Idempotent HTTP Write',
			reason: `succeeded on a later delivery (execution ${context.executionId})`,
		});
	}
	return outcomes;
}

async function parkFailures(
	store: Store,
	context: WriteContext,
	failed: Array<{ outcome: WriteOutcome; request: WriteRequest }>,
	status: 'new' | 'held',
): Promise<void> {
	if (failed.length === 0) return;
	const requests: ParkRequest[] = failed.map(({ outcome, request }) => ({
		workflowId: context.workflowId ?? 'unsaved',
		workflowName: context.workflowName,
		executionId: context.executionId,
		step: context.node,
		itemIndex: request.index,
		idempotencyKey: request.key,
		runLink: context.runLink,
		integration: context.integration,
		errorClass: outcome.failure!.class,
		errorMessage: outcome.failure!.message,
		errorStatus: outcome.failure!.status,
		attempts: outcome.attempts,
		// The configured text says what the steps before this one did; when this step's own
		// outcome is unknown, the record must not read as if its write certainly did not happen.
		alreadyHappened:
			outcome.failure!.class === 'unknown_outcome'
				? [
						context.alreadyHappened,
						`${context.node} may have taken effect (its response was lost): check before replaying`,
					]
						.filter(Boolean)
						.join('; ')
				: context.alreadyHappened,
		impact: context.impact,
		owner: context.owner,
		status,
		payload: request.payload,
		retryAfter: outcome.failure!.retryAt,
		retentionDays: 90,
	}));
	const results = await parkItems(store, requests);
	results.forEach((result, i) => (failed[i].outcome.failure!.deadLetterId = result.id));
}
