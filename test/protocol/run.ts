import { isPaused, pause, resume } from '../../lib/control/pauses';
import {
	getDeadLettersByKey,
	OPEN_STATUSES,
	parkItems,
	StatusChangeRefusedError,
	takeForReplay,
	updateDeadLetterStatus,
} from '../../lib/deadletter';
import {
	ClaimMode,
	claimEvents,
	completeEvents,
	failExecution,
	releaseExecutionClaims,
} from '../../lib/dedupe';
import { StoreUnavailableError } from '../../lib/errors';
import { abandonExecutionKeys } from '../../lib/idempotency/recovery';
import {
	COMPENSATION_FAILED_REASON,
	compensateDeadLetter,
	DEFAULT_POLICY,
	derivedKey,
	runWrites,
	type WriteContext,
	type WriteDeps,
	type WriteOutcome,
	type WriteRequest,
} from '../../lib/idempotency';
import type { Store } from '../../lib/store';
import { sleep } from '../helpers/sleep';
import { writeContext } from '../helpers/writeContext';
import { writeRequest } from '../helpers/writeRequest';
import type { Command, Schedule } from './schedule';
import { SimTarget } from './target';

/**
 * Runs one schedule against real Postgres with the engine's own functions, then checks the
 * invariants from the target's truth and the store's rows. Everything a schedule touches is
 * named after it (keys, integration, workflow, consumer), so schedules share one schema.
 */
export interface ModelEnv {
	/** One store per simulated worker process; actors are spread over them. */
	workers: Store[];
	admin: Store;
}

/** Timings small enough for hundreds of schedules a minute, in the same proportions as production. */
const TIMEOUT_MS = 60;
const LEASE_MARGIN_MS = 60;
const GRACE_MS = 30;
/** A late commit lands this long after the client's timeout: within the grace the protocol assumes. */
const LATE_MS = 12;
/** A commit beyond the horizon (GRACE_MS, the node's Target Commit Horizon) lands this long after. */
const BEYOND_MS = GRACE_MS + 40;
const CLAIM_LEASE_S = 0.15;
/**
 * A stall between the fence and the wire: longer than a lease (timeout + margin), a waiting
 * owner's poll, its takeover's wait (timeout + grace) and its lookup, so another owner may have
 * looked and sent by the time the stalled one wakes.
 */
const STALL_MS = 450;
const BREAKER = { threshold: 2, coolDownSeconds: 0.3 };
/** The retry policy of every write and every Compensate the model runs (the engine only reads it). */
const POLICY = {
	...DEFAULT_POLICY,
	maxAttempts: 3,
	baseDelayMs: 5,
	maxDelayMs: 20,
	deadlineMs: 700,
};

interface Execution {
	id: string;
	/** The keys it delivered (one item each). */
	keys?: number[];
	killed: boolean;
	faultNext: boolean;
	/** The next statement commits, then its reply is lost. */
	loseNextReply?: boolean;
	/** The next send freezes the process first (see STALL_MS). */
	stallNext?: boolean;
	/** Frozen until then (ms since the epoch): no statement runs, no lease is renewed. */
	frozenUntil?: number;
	done?: Promise<unknown>;
	/** The run failed because the store was unavailable (or too slow to keep its leases). */
	storeFailed?: boolean;
	/** When it was delivered (ms since the epoch). */
	at?: number;
}

/** Waits while the execution's process is frozen (a stall). */
async function thaw(execution: Execution): Promise<void> {
	const left = (execution.frozenUntil ?? 0) - Date.now();
	if (left > 0) await sleep(left);
}

/**
 * A worker's store as one execution sees it: dead once killed, frozen while stalled, failing once
 * when told (before the statement, or after it committed, its reply lost).
 */
function storeOf(worker: Store, execution: Execution): Store {
	return new Proxy(worker, {
		get(target, prop, receiver) {
			if (prop !== 'query' && prop !== 'execute' && prop !== 'transaction')
				return Reflect.get(target, prop, receiver);
			return async (...args: unknown[]) => {
				await thaw(execution);
				if (execution.killed) return await new Promise(() => undefined);
				if (execution.faultNext) {
					execution.faultNext = false;
					throw new StoreUnavailableError(
						'Reliability store unreachable (injected by the model check)',
					);
				}
				const result = await (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(
					target,
					args,
				);
				await thaw(execution);
				if (execution.killed) return await new Promise(() => undefined);
				if (execution.loseNextReply) {
					execution.loseNextReply = false;
					throw new StoreUnavailableError(
						'Connection to the reliability store lost after the statement (injected by the model check)',
					);
				}
				return result;
			};
		},
	});
}

export async function runSchedule(
	env: ModelEnv,
	schedule: Schedule,
	id: string,
): Promise<string[]> {
	const violations: string[] = [];
	const scope = `${id}`;
	const integration = `${id}-api`;
	const workflowId = `${id}-wf`;
	const consumer = `${id}-c`;
	const target = new SimTarget(schedule.target, TIMEOUT_MS, LATE_MS, BEYOND_MS);
	const keyName = (k: number) => `${id}-k${k}`;
	const eventName = (e: number) => `${id}-e${e}`;
	const deliveries: Execution[] = [];
	const running: Array<Promise<unknown>> = [];
	const delivered = new Set<number>();
	let executions = 0;
	let usedBreaker = false;
	// Dedupe truth: completions per event, and when each event was first completed.
	const completions = new Map<string, number>();
	const completedAt = new Map<string, number>();
	// Keys whose settled record passed its retention: a later claim starts a new operation, whose
	// effects are counted from that moment (the retention is what makes a key forgettable).
	const expiries = new Map<string, { at: number; generation: number; succeeded: boolean }>();

	// Two-step items: Create (scope `-a`, with a compensating request) before the Write; both
	// steps of an item share its item reference, so a parked Write lists Create as taken.
	const scopeA = `${id}-a`;
	const keyNameA = (k: number) => `${id}-a${k}`;
	const itemRef = (k: number) => `${id}-i${k}`;
	// Every run of a Create step: when it started, and whether it read its key as done.
	const createRuns: Array<{ key: string; startedAt: number; ok: boolean; execution: string }> = [];
	let compensations = 0;

	// The tests' write context (retention 30 days, parking on), with the model's timings.
	const context = (execution: string, withIntegration: boolean, node = 'Write'): WriteContext =>
		writeContext({
			workflowId,
			executionId: execution,
			node,
			integration: withIntegration ? integration : undefined,
			policy: POLICY,
			onUnknown: schedule.strategy,
			concurrency: 2,
			maxSavedBodyChars: 10_000,
			breaker: withIntegration ? BREAKER : undefined,
			leaseMarginMs: LEASE_MARGIN_MS,
			inFlightGraceMs: GRACE_MS,
		});
	const request = (
		key: number,
		variant: number,
		index: number,
		step: 'create' | 'write' = 'write',
	): WriteRequest & { body: unknown } => {
		const body = { key, v: variant };
		return {
			...writeRequest({
				index,
				scope: step === 'create' ? scopeA : scope,
				key: step === 'create' ? keyNameA(key) : keyName(key),
				url: `/sim/${step}`,
				body,
				timeoutMs: TIMEOUT_MS,
			}),
			body,
			...(schedule.twoSteps
				? {
						itemRef: itemRef(key),
						...(step === 'create'
							? {
									compensation: {
										kind: 'request' as const,
										method: 'DELETE',
										url: '/sim/create/{{ $json.id }}',
									},
								}
							: {}),
					}
				: {}),
		};
	};
	/** The engine ends an item on an error nothing foresaw; in the model nothing should be unforeseen. */
	const foreseen = (execution: string, outcomes: WriteOutcome[]) => {
		for (const outcome of outcomes) {
			if (/^the write failed (after|before)/.test(outcome.failure?.message ?? '')) {
				violations.push(`delivery ${execution}, key ${outcome.key}: ${outcome.failure!.message}`);
			}
		}
	};
	/**
	 * One run of an item through the workflow's steps (Create, then the Write for the items whose
	 * Create is done), with the store and the transport it is given. Resolves with the Write's
	 * outcome per key (undefined: its item stopped at Create).
	 */
	const runItems = async (
		store: Store,
		execution: Execution,
		keys: number[],
		variant: number,
		withIntegration: boolean,
	): Promise<Map<number, WriteOutcome>> => {
		const deps = (requests: Array<{ body: unknown }>): WriteDeps => ({
			send: async (r, _attempt, wire) => {
				if (execution.stallNext) {
					execution.stallNext = false;
					execution.frozenUntil = Date.now() + STALL_MS;
					await thaw(execution);
				}
				return await target.send(r, requests[r.index].body, () => execution.killed, wire);
			},
			lookup: schedule.strategy === 'lookup' ? (r) => target.lookup(r) : undefined,
		});
		let todo = keys;
		if (schedule.twoSteps) {
			const startedAt = Date.now();
			const creates = keys.map((k, i) => request(k, variant, i, 'create'));
			const outcomes = await runWrites(
				store,
				context(execution.id, withIntegration, 'Create'),
				creates,
				deps(creates),
			);
			foreseen(execution.id, outcomes);
			outcomes.forEach((o, i) =>
				createRuns.push({
					key: keyNameA(keys[i]),
					startedAt,
					ok: o.ok,
					execution: execution.id,
				}),
			);
			todo = keys.filter((_, i) => outcomes[i].ok);
		}
		const writes = todo.map((k, i) => request(k, variant, i));
		const outcomes = await runWrites(
			store,
			context(execution.id, withIntegration),
			writes,
			deps(writes),
		);
		foreseen(execution.id, outcomes);
		return new Map(todo.map((k, i) => [k, outcomes[i]]));
	};
	const deliver = (
		keys: number[],
		variant: number,
		withIntegration: boolean,
		worker: Store,
	): Execution => {
		const execution: Execution = {
			id: `${id}-x${executions++}`,
			keys,
			killed: false,
			faultNext: false,
			at: Date.now(),
		};
		for (const k of keys) delivered.add(k);
		if (withIntegration) usedBreaker = true;
		execution.done = runItems(
			storeOf(worker, execution),
			execution,
			keys,
			variant,
			withIntegration,
		).catch((error: unknown) => {
			if (error instanceof StoreUnavailableError) execution.storeFailed = true;
			else violations.push(`delivery ${execution.id} threw ${String(error)}`);
		});
		return execution;
	};

	/**
	 * The Replay workflow: take, re-run each record's item with its key (through every step: a
	 * step done is answered from its key), mark replayed if the item's last step succeeded.
	 */
	const replayRun = async (worker: Store): Promise<number> => {
		const taken = await takeForReplay(worker, { taker: `${id} replay`, limit: 50, workflowId });
		for (const record of taken) {
			const body = record.payload as { key: number; v: number };
			const execution: Execution = {
				id: `${id}-r${executions++}`,
				killed: false,
				faultNext: false,
			};
			const outcomes = await runItems(
				worker,
				execution,
				[body.key],
				body.v,
				record.integration !== null,
			).catch(() => undefined);
			if (outcomes?.get(body.key)?.ok) {
				await updateDeadLetterStatus(worker, {
					id: record.id,
					to: 'replayed',
					actor: `${id} replay`,
					reason: 're-run finished',
					expectedGeneration: record.generation,
				}).catch((error: unknown) => {
					if (!(error instanceof StatusChangeRefusedError)) throw error;
				});
			}
		}
		return taken.length;
	};

	/** An operator presses Compensate on each open dead letter of a key's item. */
	const compensate = async (key: number, worker: Store): Promise<void> => {
		const open = (await getDeadLettersByKey(worker, [keyName(key), keyNameA(key)])).filter(
			(r) => r.workflow_id === workflowId && OPEN_STATUSES.includes(r.status),
		);
		for (const record of open) {
			await compensateDeadLetter(
				worker,
				{
					id: record.id,
					actor: 'operator',
					executionId: `${id}-c${compensations++}`,
					policy: POLICY,
				},
				{
					send: (reversal, wire) =>
						target.send(
							{
								index: 0,
								scope: scopeA,
								key: reversal.key,
								fingerprint: '',
								payload: null,
								timeoutMs: TIMEOUT_MS,
							},
							reversal.body ?? { url: reversal.url },
							() => false,
							wire,
						),
				},
			).catch((error: unknown) => {
				// Refused: a replay holds it, or it closed meanwhile.
				if (!(error instanceof StatusChangeRefusedError)) throw error;
			});
		}
	};

	const claim = async (
		command: Extract<Command, { kind: 'claim' }>,
		worker: Store,
	): Promise<void> => {
		const execution = `${id}-x${executions++}`;
		const mode =
			command.mode === 'doneAtClaim' ? ClaimMode.doneAtClaim : ClaimMode.leaseUntilComplete;
		const ids = command.events.map(eventName);
		const startedAt = Date.now();
		const results = await claimEvents(
			worker,
			{
				consumer,
				workflowId,
				executionId: execution,
				mode,
				leaseSeconds: CLAIM_LEASE_S,
				retentionDays: 30,
			},
			ids.map((eventId, index) => ({ index, eventId })),
		);
		const won = results.filter((r) => r.outcome === 'new').map((r) => r.eventId);
		for (const eventId of won) {
			const first = completedAt.get(eventId);
			if (first !== undefined && first < startedAt) {
				violations.push(`event ${eventId} was New again for ${execution} after it was completed`);
			}
		}
		await sleep(5);
		if (command.end === 'die' || won.length === 0) return;
		if (command.end === 'fail') {
			await releaseExecutionClaims(worker, execution);
			return;
		}
		if (command.end === 'stall') await sleep(CLAIM_LEASE_S * 1000 + 60);
		for (const result of await completeEvents(worker, consumer, won, execution)) {
			if (!result.changed) continue;
			completions.set(result.eventId, (completions.get(result.eventId) ?? 0) + 1);
			if (!completedAt.has(result.eventId)) completedAt.set(result.eventId, Date.now());
		}
	};

	const operator = async (command: Extract<Command, { kind: 'operator' }>, worker: Store) => {
		const open = (await getDeadLettersByKey(worker, [keyName(command.key)])).filter(
			(r) => r.workflow_id === workflowId && OPEN_STATUSES.includes(r.status),
		);
		for (const record of open) {
			const to = {
				replay: 'replay_requested',
				resolve: 'resolved',
				abandon: 'abandoned',
				beingFixed: 'being_fixed',
			}[command.action] as 'replay_requested' | 'resolved' | 'abandoned' | 'being_fixed';
			await updateDeadLetterStatus(worker, {
				id: record.id,
				to,
				actor: 'operator',
				reason: 'model check',
			}).catch((error: unknown) => {
				if (!(error instanceof StatusChangeRefusedError)) throw error;
			});
		}
	};

	const admin = env.admin;
	const started = Date.now();
	for (const [n, command] of schedule.commands.entries()) {
		const wait = started + command.at - Date.now();
		if (wait > 0) await sleep(wait);
		const worker = env.workers[n % env.workers.length];
		const act = async (): Promise<void> => {
			switch (command.kind) {
				case 'deliver':
					deliveries.push(deliver(command.keys, command.variant, command.integration, worker));
					return;
				case 'kill': {
					const victim = deliveries[command.delivery % Math.max(1, deliveries.length)];
					if (victim) victim.killed = true;
					return;
				}
				case 'storeFault': {
					const victim = deliveries[command.delivery % Math.max(1, deliveries.length)];
					if (victim) victim.faultNext = true;
					return;
				}
				case 'stall': {
					const victim = deliveries[command.delivery % Math.max(1, deliveries.length)];
					if (victim) victim.stallNext = true;
					return;
				}
				case 'storeLostReply': {
					const victim = deliveries[command.delivery % Math.max(1, deliveries.length)];
					if (victim) victim.loseNextReply = true;
					return;
				}
				case 'expireLease':
					await admin.query(
						`UPDATE ${admin.table('idempotency_keys')} SET lease_until = now() - interval '1 second' WHERE scope = $1 AND key = $2 AND status = 'in_progress'`,
						[scope, keyName(command.key)],
					);
					return;
				case 'expireKey': {
					const [row] = await admin.query<{ status: string; generation: string }>(
						`UPDATE ${admin.table('idempotency_keys')} SET expires_at = now() - interval '1 day' WHERE scope = $1 AND key = $2 RETURNING status, generation`,
						[scope, keyName(command.key)],
					);
					if (row && (row.status === 'succeeded' || row.status === 'failed')) {
						expiries.set(keyName(command.key), {
							succeeded: row.status === 'succeeded',
							at: Date.now(),
							generation: Number(row.generation),
						});
					}
					return;
				}
				case 'pause':
					await pause(worker, 'integration', integration, 'operator', 'model check outage');
					return;
				case 'resume':
					await resume(worker, 'integration', integration, 'operator', 'model check recovery');
					return;
				case 'replayRun':
					await replayRun(worker);
					return;
				case 'compensate':
					await compensate(command.key, worker);
					return;
				case 'operator':
					await operator(command, worker);
					return;
				case 'claim':
					await claim(command, worker);
					return;
			}
		};
		running.push(
			act().catch((error: unknown) =>
				violations.push(`${command.kind} at ${command.at} ms threw ${String(error)}`),
			),
		);
	}
	await Promise.all(running);
	await Promise.all(deliveries.filter((d) => !d.killed).map((d) => d.done));
	await target.settled();
	await checkHolds(admin, workflowId, violations, 'during the schedule');
	await checkAudit(admin, workflowId, violations);

	// The state the schedule left, checked per delivered item before anything is delivered again
	// (senders do not redeliver after a 2xx): n8n reports each run that died or whose store failed,
	// and the bundled Error handler settles it (Settle Failed Execution, then Park Failure for an
	// execution whose items the inbox did not keep, as these writes' were not).
	for (const delivery of deliveries) {
		if (!delivery.killed && !delivery.storeFailed) continue;
		const settled = await failExecution(admin, {
			executionId: delivery.id,
			crashed: delivery.killed,
			message: delivery.killed ? 'Workflow did not finish' : 'the store was unavailable',
		});
		if (settled.items.length === 0 && settled.kept === 0)
			await parkItems(admin, [
				{
					workflowId,
					executionId: delivery.id,
					step: 'Write',
					idempotencyKey: `execution:${delivery.id}`,
					errorClass: 'execution',
					payload: { keys: delivery.keys },
				},
			]);
	}
	await checkItemsAccounted(
		admin,
		{ scope, workflowId, deliveries, keyName, keyNameA, expiries },
		violations,
	);

	// Recovery, as the world would do it: dead owners' leases end, the outage ends, the breaker
	// cools down, senders deliver once more, the Replay workflow drains its queue.
	await admin.query(
		`UPDATE ${admin.table('idempotency_keys')} SET lease_until = now() - interval '1 second' WHERE scope IN ($1, $2) AND status = 'in_progress'`,
		[scope, scopeA],
	);
	// The store's word, not the order the commands were issued in: a pause and a resume issued a
	// moment apart may commit in either order, and the last to commit is what stands.
	if (await isPaused(admin, 'integration', integration))
		await resume(admin, 'integration', integration, 'operator', 'model check: outage over');
	if (usedBreaker) await sleep(BREAKER.coolDownSeconds * 1000 + 20);
	// A run the store failed (down, or too slow to keep a lease) fails its n8n execution: the
	// Error handler settles its keys (Settle Failed Execution) and the sender delivers again.
	for (let attempt = 0; attempt < 3 && delivered.size > 0; attempt++) {
		const last = deliver([...delivered], 0, usedBreaker, env.workers[0]);
		await last.done;
		if (!last.storeFailed) break;
		await abandonExecutionKeys(admin, last.id);
	}
	for (let round = 0; round < 3 && (await replayRun(env.workers[0])) > 0; round++);
	await target.settled();

	await checkHolds(admin, workflowId, violations, 'after recovery');
	await checkAudit(admin, workflowId, violations);
	await checkWrites(
		admin,
		{
			scope,
			workflowId,
			keys: [...delivered].map(keyName),
			target,
			honoursKeys: schedule.target.honoursKeys,
			strategy: schedule.strategy,
			expiries,
			// An item that stopped at its Create step is accounted for by that step's letter.
			earlierStep: schedule.twoSteps
				? new Map([...delivered].map((k) => [keyName(k), keyNameA(k)]))
				: undefined,
		},
		violations,
	);
	if (schedule.twoSteps) {
		await checkWrites(
			admin,
			{
				scope: scopeA,
				workflowId,
				keys: [...delivered].map(keyNameA),
				target,
				honoursKeys: schedule.target.honoursKeys,
				strategy: schedule.strategy,
				expiries: new Map(),
			},
			violations,
		);
		await checkCompensated(admin, { scopeA, target, createRuns }, violations);
	}
	await checkEvents(admin, consumer, completions, violations);
	return violations;
}

/**
 * Every delivered item (a key of one delivery) ends done (its key succeeded), in a dead letter a
 * person or a replay owns (of its key, or for a run that died, of its execution), or it is lost.
 * A key that succeeded and then passed its retention (expireKey) may be claimed again as a new
 * operation, whose record then speaks of that operation: an item delivered before the expiry was
 * done when its record was forgotten.
 */
async function checkItemsAccounted(
	admin: Store,
	run: {
		scope: string;
		workflowId: string;
		deliveries: Execution[];
		keyName: (k: number) => string;
		/** The item's Create step's key (two-step items). */
		keyNameA: (k: number) => string;
		expiries: Map<string, { at: number; generation: number; succeeded: boolean }>;
	},
	violations: string[],
) {
	const records = new Map(
		(
			await admin.query<{ key: string; status: string }>(
				`SELECT key, status FROM ${admin.table('idempotency_keys')} WHERE scope = $1`,
				[run.scope],
			)
		).map((r) => [r.key, r.status]),
	);
	const letters = await admin.query<{ idempotency_key: string; status: string }>(
		`SELECT idempotency_key, status FROM ${admin.table('dead_letters')} WHERE workflow_id = $1`,
		[run.workflowId],
	);
	const owned = (key: string) =>
		letters.some((l) => l.idempotency_key === key && l.status !== 'replayed');
	for (const delivery of run.deliveries) {
		for (const k of delivery.keys ?? []) {
			const key = run.keyName(k);
			const status = records.get(key);
			if (status === 'succeeded' || owned(key) || owned(run.keyNameA(k))) continue;
			const expiry = run.expiries.get(key);
			if (expiry?.succeeded && (delivery.at ?? Infinity) < expiry.at) continue;
			if ((delivery.killed || delivery.storeFailed) && owned(`execution:${delivery.id}`)) continue;
			// Another delivery of the same item carried it on (its success at an earlier step closed
			// this delivery's letter of that step, before or after this one gave up waiting on it)
			// and then died: the item is with that run's letter.
			const carriedOn = run.deliveries.some(
				(other) =>
					other !== delivery &&
					(other.keys ?? []).includes(k) &&
					(other.killed || other.storeFailed) &&
					owned(`execution:${other.id}`),
			);
			if (carriedOn) continue;
			violations.push(
				`delivery ${delivery.id}, key ${key}: silently gone before any redelivery (record ${status ?? 'absent'}, no letter a person or a replay owns)`,
			);
		}
	}
}

/** No held item without a pause or a breaker that can release it. */
async function checkHolds(admin: Store, workflowId: string, violations: string[], when: string) {
	const stuck = await admin.query<{
		id: string;
		hold_reason: string | null;
		integration: string | null;
	}>(
		`SELECT d.id, d.hold_reason, d.integration FROM ${admin.table('dead_letters')} d
		 WHERE d.workflow_id = $1 AND d.status = 'held'
		   AND NOT (d.hold_reason = 'pause' AND EXISTS (SELECT 1 FROM ${admin.table('pauses')} p WHERE p.scope = 'integration' AND p.name = d.integration AND p.paused))
		   AND NOT (d.hold_reason = 'breaker' AND EXISTS (SELECT 1 FROM ${admin.table('breakers')} b WHERE b.integration = d.integration AND b.open_until > now()))`,
		[workflowId],
	);
	// A breaker hold whose cool-down just ended is released by the next take; only after recovery is it stuck.
	for (const row of stuck) {
		if (when !== 'after recovery' && row.hold_reason === 'breaker') continue;
		violations.push(
			`dead letter ${row.id} is held (${row.hold_reason}) with nothing to release it, ${when}`,
		);
	}
}

/** An audit event for every status change: each record's events chain to its current status. */
async function checkAudit(admin: Store, workflowId: string, violations: string[]) {
	const rows = await admin.query<{
		id: string;
		status: string;
		chain: Array<{ f: string | null; t: string }>;
	}>(
		`SELECT d.id, d.status, json_agg(json_build_object('f', e.from_status, 't', e.to_status) ORDER BY e.id) AS chain
		 FROM ${admin.table('dead_letters')} d JOIN ${admin.table('dead_letter_events')} e ON e.dead_letter_id = d.id
		 WHERE d.workflow_id = $1 GROUP BY d.id, d.status`,
		[workflowId],
	);
	for (const row of rows) {
		const chain = row.chain;
		const broken =
			chain[0].f !== null ||
			chain.some((e, i) => i > 0 && e.f !== chain[i - 1].t) ||
			chain[chain.length - 1].t !== row.status;
		if (broken)
			violations.push(
				`dead letter ${row.id} (${row.status}) has an audit trail that does not chain: ${JSON.stringify(chain)}`,
			);
	}
}

async function checkWrites(
	admin: Store,
	run: {
		scope: string;
		workflowId: string;
		keys: string[];
		target: SimTarget;
		honoursKeys: boolean;
		strategy: Schedule['strategy'];
		expiries: Map<string, { at: number; generation: number; succeeded: boolean }>;
		/** The key of the step before each key's step, whose letter may hold the item. */
		earlierStep?: Map<string, string>;
	},
	violations: string[],
) {
	const rows = await admin.query<{
		key: string;
		status: string;
		generation: string;
		execution_id: string;
		lease_until: Date;
		completed_at: Date | null;
		history: unknown[];
	}>(
		`SELECT key, status, generation, execution_id, lease_until, completed_at, history FROM ${admin.table('idempotency_keys')} WHERE scope = $1`,
		[run.scope],
	);
	const before = violations.length;
	const records = new Map(rows.map((r) => [r.key, r.status]));
	const generations = new Map(rows.map((r) => [r.key, Number(r.generation)]));
	const histories = new Map(rows.map((r) => [r.key, Array.isArray(r.history) ? r.history : []]));
	const completions = new Map(
		rows.flatMap((r) => (r.completed_at ? [[r.key, r.completed_at.getTime()] as const] : [])),
	);
	const letters = await admin.query<{
		idempotency_key: string;
		status: string;
		error_class: string;
		closed_at: Date | null;
		compensate_released_at: Date | null;
	}>(
		`SELECT d.idempotency_key, d.status, d.error_class, d.closed_at,
		        (SELECT max(e.at) FROM ${admin.table('dead_letter_events')} e
		         WHERE e.dead_letter_id = d.id AND e.from_status = 'being_fixed' AND e.to_status = 'new'
		           AND starts_with(e.reason, $2)) AS compensate_released_at
		 FROM ${admin.table('dead_letters')} d WHERE d.workflow_id = $1`,
		[run.workflowId, COMPENSATION_FAILED_REASON],
	);
	for (const key of run.keys) {
		const expiry = run.expiries.get(key);
		// A record renewed after its retention is a new operation: its own effects count from then.
		const renewed = expiry !== undefined && (generations.get(key) ?? 0) > expiry.generation;
		const all = run.target.effectsOf(key);
		const sinceRenewal = all.filter((e) => !renewed || e.at >= expiry.at).length;
		// A target that honours keys answers a forgotten key from its own memory: one effect, ever.
		const effects = run.honoursKeys ? all.length : sinceRenewal;
		const status = records.get(key);
		const mine = letters.filter((l) => l.idempotency_key === key);
		// At most one effect per key, where the strategy promises once (every strategy generated does).
		// The one exception the node page states: a target that ignores keys and commits after the
		// horizon it was given can be read as absent by a lookup, and the resend is a second effect.
		const outsideHorizon =
			!run.honoursKeys && run.strategy === 'lookup' && all.some((e) => e.beyondHorizon);
		// Outside the horizon a lookup may miss one late commit: every other effect still counts.
		const counted = outsideHorizon
			? all.filter((e) => !e.beyondHorizon && (!renewed || e.at >= expiry.at)).length
			: effects;
		if (counted > 1) violations.push(`key ${key} has ${effects} effects at the target`);
		// A record says succeeded only if the effect exists; failed only if this operation made none.
		// (A lookup may find an effect from before the key was forgotten: that one counts too. A
		// renewed operation that failed against a target that was down says nothing of the old one.)
		if (status === 'succeeded' && all.length === 0)
			violations.push(`key ${key} is succeeded but the target has no effect`);
		// Under Reconcile by lookup, at any target, a lookup may read a commit beyond the horizon as
		// absent and the record end failed: only effects a lookup could see count against it there.
		const lookupMissed = run.strategy === 'lookup' && all.some((e) => e.beyondHorizon);
		const againstFailed = lookupMissed
			? all.filter((e) => !e.beyondHorizon && (!renewed || e.at >= expiry.at)).length
			: sinceRenewal;
		if (status === 'failed' && againstFailed > 0)
			violations.push(`key ${key} is failed but the target has ${againstFailed} effect(s)`);
		// Every item ends done, or with a dead letter a person or a replay owns; never silently gone.
		// A compensated step was reversed by a person's Compensate: its item's letter says so.
		const earlier = run.earlierStep?.get(key);
		const accounted =
			mine.some((l) => l.status !== 'replayed') ||
			status === 'compensated' ||
			// An item that never reached its Write (no record) is held by its Create step's letter;
			// one whose redelivery stopped at its Create (a conflict there) by that letter while open.
			letters.some(
				(l) =>
					earlier !== undefined &&
					l.idempotency_key === earlier &&
					(status === undefined
						? l.status !== 'replayed'
						: (OPEN_STATUSES as readonly string[]).includes(l.status)),
			);
		if (status !== 'succeeded' && !accounted) {
			violations.push(
				`key ${key} is ${status ?? 'without a record'} and has no open or person-closed dead letter`,
			);
		}
		// A record closed as replayed means the work is done (the work of its own operation: one
		// closed before the renewed operation's first attempt speaks of the earlier one; the old
		// operation's own success may close its letters after the key was marked forgotten, until
		// the renewal claims it).
		const renewalStart = renewed
			? Math.min(
					...(histories.get(key) ?? [])
						.map((entry) => Date.parse(String((entry as { at?: unknown }).at)))
						.filter((at) => at >= expiry.at),
					// No attempt since the expiry: every close after the expiry is the new operation's.
					Number.MAX_SAFE_INTEGER,
				)
			: 0;
		const since = renewalStart === Number.MAX_SAFE_INTEGER ? (expiry?.at ?? 0) : renewalStart;
		const closedInThisOperation = (l: (typeof mine)[number]) =>
			!renewed || l.closed_at === null || l.closed_at.getTime() >= since;
		if (
			status !== 'succeeded' &&
			status !== 'compensated' &&
			mine.some((l) => l.status === 'replayed' && closedInThisOperation(l))
		) {
			violations.push(
				`key ${key} has a dead letter closed as replayed while the record is ${status ?? 'missing'}`,
			);
		}
		// No open dead letter waits for work that is done. But for one a person's Compensate held
		// while the key succeeded, and gave back after its compensation failed: that success could
		// not close it, and what the failed reversal did is the person's to check.
		const completedAt = completions.get(key);
		const heldThroughSuccess = (l: (typeof mine)[number]) =>
			l.compensate_released_at !== null &&
			completedAt !== undefined &&
			completedAt <= l.compensate_released_at.getTime();
		if (
			status === 'succeeded' &&
			mine.some(
				(l) =>
					(l.status === 'new' || l.status === 'held') &&
					l.error_class !== 'conflict' &&
					!heldThroughSuccess(l),
			)
		) {
			violations.push(`key ${key} is succeeded but a dead letter of it is still open for review`);
		}
		if (status === 'in_progress')
			violations.push(`key ${key} is still in progress after every owner finished`);
	}
	// What the store says of the keys a violation names, so a failing schedule explains itself.
	if (violations.length > before) {
		for (const row of rows) {
			if (!violations.slice(before).some((v) => v.includes(row.key))) continue;
			violations.push(
				`  record ${row.key}: ${row.status}, generation ${row.generation}, owner ${row.execution_id}, lease until ${row.lease_until.toISOString()}, history ${JSON.stringify(row.history)}`,
			);
		}
	}
}

/**
 * A compensated step stays compensated: once a Create step's reversal reached the target, its
 * record reads `compensated` (never `succeeded` again), and no run of it that started after the
 * reversal read it as done (answered from the saved response of a resource that is gone).
 */
async function checkCompensated(
	admin: Store,
	run: {
		scopeA: string;
		target: SimTarget;
		createRuns: Array<{ key: string; startedAt: number; ok: boolean; execution: string }>;
	},
	violations: string[],
) {
	const rows = await admin.query<{ key: string; status: string }>(
		`SELECT key, status FROM ${admin.table('idempotency_keys')} WHERE scope = $1`,
		[run.scopeA],
	);
	const statuses = new Map(rows.map((r) => [r.key, r.status]));
	for (const key of new Set(run.createRuns.map((r) => r.key))) {
		const reversals = run.target.effectsOf(derivedKey(key, 'compensate'));
		if (reversals.length === 0) continue;
		const reversedAt = Math.min(...reversals.map((e) => e.at));
		if (statuses.get(key) !== 'compensated')
			violations.push(
				`key ${key} was reversed at the target but its record is ${statuses.get(key) ?? 'absent'}`,
			);
		for (const r of run.createRuns) {
			if (r.key === key && r.ok && r.startedAt > reversedAt)
				violations.push(
					`${r.execution} read key ${key} as done ${r.startedAt - reversedAt} ms after its effect was reversed`,
				);
		}
	}
}

async function checkEvents(
	admin: Store,
	consumer: string,
	completions: Map<string, number>,
	violations: string[],
) {
	for (const [eventId, count] of completions) {
		if (count > 1) violations.push(`event ${eventId} was completed ${count} times`);
	}
	const rows = await admin.query<{ event_id: string; status: string; completed_by: string | null }>(
		`SELECT event_id, status, completed_by FROM ${admin.table('processed_events')} WHERE consumer = $1`,
		[consumer],
	);
	for (const eventId of completions.keys()) {
		const row = rows.find((r) => r.event_id === eventId);
		if (!row || row.status !== 'done' || row.completed_by !== 'complete') {
			violations.push(
				`event ${eventId} was completed but its claim is ${row ? `${row.status}/${row.completed_by}` : 'gone'}`,
			);
		}
	}
}
