import fc from 'fast-check';
import { Fault, type TargetSpec } from './target';

/**
 * A schedule of the model check: who does what, when (ms after the start), against a target
 * with its faults. Executions deliver items (a few shared keys), die mid-work, meet store
 * errors and lost leases; operators pause, resume, replay and resolve; the Replay workflow
 * takes records; consumers claim, complete, fail or die on a few shared event IDs.
 */
type Strategy = 'retry' | 'lookup' | 'park';

export type Command =
	| { at: number; kind: 'deliver'; keys: number[]; variant: number; integration: boolean }
	/** The nth delivery's process dies: it answers nothing and writes nothing from now on. */
	| { at: number; kind: 'kill'; delivery: number }
	/** The nth delivery's next store statement fails (Postgres unreachable for a moment). */
	| { at: number; kind: 'storeFault'; delivery: number }
	/**
	 * The nth delivery's next store statement commits, and its reply is lost (the connection
	 * drops after the commit): the run sees a store error for work that was done.
	 */
	| { at: number; kind: 'storeLostReply'; delivery: number }
	/**
	 * The nth delivery's process freezes at its next send, after the fence and before the wire
	 * (a long GC pause, a blocked event loop, a slow credential read), for longer than its lease and
	 * a takeover's wait: no statement, no renewal meanwhile; then it goes on to send.
	 */
	| { at: number; kind: 'stall'; delivery: number }
	/** A key's lease ends now, as if its owner had stalled past it (a long pause, a clock jump). */
	| { at: number; kind: 'expireLease'; key: number }
	/** A key's record is past its retention. */
	| { at: number; kind: 'expireKey'; key: number }
	/**
	 * An operator presses Compensate on the open dead letters of a key's item: the steps that took
	 * effect before its failed step are reversed, newest first.
	 */
	| { at: number; kind: 'compensate'; key: number }
	| { at: number; kind: 'pause' }
	| { at: number; kind: 'resume' }
	/** The Replay workflow: take, re-run, mark replayed. */
	| { at: number; kind: 'replayRun' }
	| {
			at: number;
			kind: 'operator';
			action: 'replay' | 'resolve' | 'abandon' | 'beingFixed';
			key: number;
	  }
	| {
			at: number;
			kind: 'claim';
			events: number[];
			mode: 'doneAtClaim' | 'leaseUntilComplete';
			/** After the work: complete it, fail (the error workflow releases), die, or stall past the lease and then complete. */
			end: 'complete' | 'fail' | 'die' | 'stall';
	  };

export interface Schedule {
	strategy: Strategy;
	target: TargetSpec;
	/**
	 * Each item is two steps: Create (its own key, with a compensating request) and then the Write;
	 * a Write that fails parks the item with Create as a step that took effect.
	 */
	twoSteps?: boolean;
	commands: Command[];
}

const at = fc.integer({ min: 0, max: 400 });
const key = fc.integer({ min: 0, max: 2 });

const command: fc.Arbitrary<Command> = fc.oneof(
	{
		weight: 10,
		arbitrary: fc.record({
			at,
			kind: fc.constant('deliver' as const),
			keys: fc.uniqueArray(key, { minLength: 1, maxLength: 3 }),
			variant: fc.integer({ min: 0, max: 9 }).map((n) => (n === 0 ? 1 : 0)),
			integration: fc.boolean(),
		}),
	},
	{
		weight: 2,
		arbitrary: fc.record({ at, kind: fc.constant('kill' as const), delivery: fc.nat(5) }),
	},
	{
		weight: 1,
		arbitrary: fc.record({ at, kind: fc.constant('storeFault' as const), delivery: fc.nat(5) }),
	},
	{
		weight: 1,
		arbitrary: fc.record({
			at,
			kind: fc.constant('storeLostReply' as const),
			delivery: fc.nat(5),
		}),
	},
	{
		weight: 1,
		arbitrary: fc.record({ at, kind: fc.constant('stall' as const), delivery: fc.nat(5) }),
	},
	{ weight: 2, arbitrary: fc.record({ at, kind: fc.constant('expireLease' as const), key }) },
	{ weight: 1, arbitrary: fc.record({ at, kind: fc.constant('expireKey' as const), key }) },
	{ weight: 1, arbitrary: fc.record({ at, kind: fc.constant('pause' as const) }) },
	{ weight: 1, arbitrary: fc.record({ at, kind: fc.constant('resume' as const) }) },
	{ weight: 2, arbitrary: fc.record({ at, kind: fc.constant('replayRun' as const) }) },
	{ weight: 2, arbitrary: fc.record({ at, kind: fc.constant('compensate' as const), key }) },
	{
		weight: 2,
		arbitrary: fc.record({
			at,
			kind: fc.constant('operator' as const),
			action: fc.constantFrom(
				'replay' as const,
				'resolve' as const,
				'abandon' as const,
				'beingFixed' as const,
			),
			key,
		}),
	},
	{
		weight: 3,
		arbitrary: fc.record({
			at,
			kind: fc.constant('claim' as const),
			events: fc.uniqueArray(key, { minLength: 1, maxLength: 3 }),
			mode: fc.constantFrom('doneAtClaim' as const, 'leaseUntilComplete' as const),
			end: fc.constantFrom('complete' as const, 'fail' as const, 'die' as const, 'stall' as const),
		}),
	},
);

const fault = fc.oneof(
	{ weight: 6, arbitrary: fc.constant(Fault.ok) },
	{ weight: 1, arbitrary: fc.constant(Fault.refused) },
	{ weight: 1, arbitrary: fc.constant(Fault.lostBefore) },
	{ weight: 2, arbitrary: fc.constant(Fault.lostAfter) },
	{ weight: 2, arbitrary: fc.constant(Fault.transient) },
	{ weight: 1, arbitrary: fc.constant(Fault.retryAfter) },
	{ weight: 1, arbitrary: fc.constant(Fault.permanent) },
	{ weight: 1, arbitrary: fc.constant(Fault.late) },
	{ weight: 1, arbitrary: fc.constant(Fault.lateBeyondHorizon) },
	{ weight: 1, arbitrary: fc.constant(Fault.committedError) },
	{ weight: 1, arbitrary: fc.constant(Fault.committedTimeout) },
);

/**
 * A commit answered with an error plays under lookup and park, which treat it as an unknown
 * outcome. Under retry with the same key, attempts that all end in such errors still settle the
 * record failed though the effect exists (the target's key keeps it to one effect), so there it
 * plays as a transient refusal until that record is settled unknown.
 */
const forStrategy = (strategy: Strategy, faults: Fault[]): Fault[] =>
	strategy !== 'retry'
		? faults
		: faults.map((f) =>
				f === Fault.committedError || f === Fault.committedTimeout ? Fault.transient : f,
			);

/**
 * Strategies with the targets they promise "once" for: any strategy when the target honours
 * keys; park or lookup when it does not (a resend with the same key is safe only at a target
 * that honours it).
 */
const strategyAndKeys = fc.oneof(
	fc.record({
		strategy: fc.constantFrom<Strategy>('retry', 'lookup', 'park'),
		honoursKeys: fc.constant(true),
	}),
	fc.record({
		strategy: fc.constantFrom<Strategy>('lookup', 'park'),
		honoursKeys: fc.constant(false),
	}),
);

export const scheduleArbitrary: fc.Arbitrary<Schedule> = fc
	.record({
		choice: strategyAndKeys,
		faults: fc.array(fault, { minLength: 1, maxLength: 12 }),
		lookupFails: fc.array(fc.boolean(), { maxLength: 4 }),
		latencyMs: fc.integer({ min: 0, max: 8 }),
		twoSteps: fc.boolean(),
		commands: fc.array(command, { minLength: 1, maxLength: 12 }),
	})
	.map(({ choice, faults, lookupFails, latencyMs, twoSteps, commands }) => ({
		strategy: choice.strategy,
		twoSteps,
		target: {
			honoursKeys: choice.honoursKeys,
			faults: forStrategy(choice.strategy, faults),
			lookupFails,
			latencyMs,
		},
		commands: [...commands].sort((a, b) => a.at - b.at),
	}));
