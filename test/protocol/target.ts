import {
	type HttpAnswer,
	leaseEnded,
	type LookupResult,
	type SendResult,
	type WireWindow,
	wireBudget,
	type WriteRequest,
} from '../../lib/idempotency';
import { sleep } from '../helpers/sleep';

/**
 * A simulated target that knows the truth: which effects it committed, per key. It honours
 * idempotency keys (one effect per key, the first answer replayed) or ignores them (every
 * committed request is a new effect). Each request plays the next fault of the schedule:
 * answered, refused before sending, lost before or after the commit, a transient or permanent
 * refusal, a late commit that lands after the client gave up (within the target's commit horizon,
 * or beyond it), or a commit answered with an error (a gateway's 502 after its origin wrote, a 408
 * after the commit).
 */
export const Fault = {
	ok: 'ok',
	refused: 'refused',
	lostBefore: 'lostBefore',
	lostAfter: 'lostAfter',
	transient: 'transient',
	retryAfter: 'retryAfter',
	permanent: 'permanent',
	late: 'late',
	/** A late commit that lands after the commit horizon the node was told (a target that breaks it). */
	lateBeyondHorizon: 'lateBeyondHorizon',
	committedError: 'committedError',
	committedTimeout: 'committedTimeout',
} as const;
export type Fault = (typeof Fault)[keyof typeof Fault];

export interface TargetSpec {
	honoursKeys: boolean;
	/** Played in order, one per request, then repeated. */
	faults: Fault[];
	/** Lookups that throw (a network error on the GET), in order, then repeated. */
	lookupFails: boolean[];
	latencyMs: number;
}

export interface Effect {
	key: string;
	body: unknown;
	at: number;
	/** Landed after the commit horizon: outside what a lookup can see in time. */
	beyondHorizon?: boolean;
}

export class SimTarget {
	readonly effects: Effect[] = [];
	readonly requests: Array<{ key: string; at: number; fault: Fault }> = [];
	private readonly saved = new Map<string, HttpAnswer>();
	private sent = 0;
	private looked = 0;
	private pending = new Set<Promise<void>>();

	constructor(
		private readonly spec: TargetSpec,
		/** How long the client waits for an answer: a late commit lands after it. */
		private readonly timeoutMs: number,
		/** How much later than the timeout a late commit may land (within the protocol's grace). */
		private readonly lateMs: number,
		/** How much later than the timeout a commit beyond the horizon lands. */
		private readonly beyondMs: number,
	) {}

	effectsOf(key: string): Effect[] {
		return this.effects.filter((e) => e.key === key);
	}

	/** Waits for commits still in flight (late ones), so the truth is complete before it is read. */
	async settled(): Promise<void> {
		while (this.pending.size > 0) await Promise.all([...this.pending]);
	}

	private commit(key: string, body: unknown, beyondHorizon = false): HttpAnswer {
		if (this.spec.honoursKeys) {
			const replay = this.saved.get(key);
			if (replay) return { ...replay, headers: { 'idempotent-replayed': 'true' } };
		}
		const effect: Effect = {
			key,
			body,
			at: Date.now(),
			...(beyondHorizon ? { beyondHorizon } : {}),
		};
		this.effects.push(effect);
		const answer: HttpAnswer = { status: 201, headers: {}, body: { id: this.effects.length, key } };
		if (this.spec.honoursKeys) this.saved.set(key, answer);
		return answer;
	}

	/**
	 * One request, as the node's transport would see it: nothing leaves after the wire window, and
	 * the client gives up at its timeout or the window's end. `dead` never answers (its process died).
	 */
	async send(
		request: WriteRequest,
		body: unknown,
		dead: () => boolean,
		wire: WireWindow,
	): Promise<SendResult> {
		const clientTimeoutMs = wireBudget(this.timeoutMs, wire);
		if (clientTimeoutMs <= 0) return leaseEnded();
		const fault = this.spec.faults.length
			? this.spec.faults[this.sent++ % this.spec.faults.length]
			: Fault.ok;
		this.requests.push({ key: request.key, at: Date.now(), fault });
		if (fault === Fault.refused)
			return { kind: 'not_sent', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' };
		await sleep(this.spec.latencyMs);
		let result: SendResult;
		switch (fault) {
			case Fault.lostBefore:
				result = { kind: 'lost', code: 'ECONNRESET', message: 'socket hang up (before commit)' };
				break;
			case Fault.lostAfter:
				this.commit(request.key, body);
				result = { kind: 'lost', code: 'ECONNRESET', message: 'socket hang up (after commit)' };
				break;
			case Fault.transient:
				result = {
					kind: 'response',
					answer: { status: 503, headers: {}, body: { message: 'unavailable' } },
				};
				break;
			case Fault.retryAfter:
				result = {
					kind: 'response',
					answer: { status: 429, headers: { 'retry-after': '0' }, body: { message: 'slow down' } },
				};
				break;
			case Fault.committedError:
			case Fault.committedTimeout: {
				this.commit(request.key, body);
				const status = fault === Fault.committedError ? 502 : 408;
				result = {
					kind: 'response',
					answer: { status, headers: {}, body: { message: `${status} after the commit` } },
				};
				break;
			}
			case Fault.permanent:
				result = {
					kind: 'response',
					answer: { status: 422, headers: {}, body: { message: 'rejected' } },
				};
				break;
			case Fault.late:
			case Fault.lateBeyondHorizon: {
				// The client times out; the target commits later, within the horizon or beyond it.
				const beyond = fault === Fault.lateBeyondHorizon;
				const waitMs = Math.max(0, clientTimeoutMs - this.spec.latencyMs);
				const landing = sleep(waitMs + (beyond ? this.beyondMs : this.lateMs)).then(() => {
					this.commit(request.key, body, beyond);
				});
				this.pending.add(landing);
				void landing.finally(() => this.pending.delete(landing));
				await sleep(waitMs);
				result = {
					kind: 'lost',
					code: 'ETIMEDOUT',
					message: `timeout of ${clientTimeoutMs}ms exceeded`,
				};
				break;
			}
			default:
				result = { kind: 'response', answer: this.commit(request.key, body) };
		}
		if (dead()) return await new Promise<SendResult>(() => undefined);
		return result;
	}

	async lookup(request: WriteRequest): Promise<LookupResult> {
		const fails = this.spec.lookupFails.length
			? this.spec.lookupFails[this.looked++ % this.spec.lookupFails.length]
			: false;
		await sleep(this.spec.latencyMs);
		if (fails) throw Object.assign(new Error('lookup: connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
		const found = this.effects.find((e) => e.key === request.key);
		return found
			? { kind: 'exists', answer: { status: 200, headers: {}, body: { key: found.key } } }
			: { kind: 'absent' };
	}
}
