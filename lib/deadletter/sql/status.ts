import { eventLetterKeySql, hashedEventLetterKeySql } from '../../dedupe/eventIds';
import type { SqlQuery, Store } from '../../store';
import { LOCK_ORDER } from './identity';
import type { DeadLetterStatus } from '../statuses';

/**
 * Evidence in the audit trail (record `id`, `actor`, `evidence`: what happened): an event that
 * leaves the status as it is (from = to), such as the answer to a compensating request. The
 * record is read locked: a status change committing meanwhile (a park of a new failure) is
 * waited for, and the evidence names the status it left, after that change's event.
 */
export const evidenceSql = (
	store: Store,
	input: { id: string; actor: string; evidence: string },
): SqlQuery => ({
	text: `
INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
SELECT id, $2, status, status, $3 FROM ${store.table('dead_letters')} WHERE id = $1 FOR SHARE`,
	values: [input.id, input.actor, input.evidence],
});

/** What every status change binds first ($1 to $5), whatever records it selects. */
export interface StatusChangeInput {
	/** The status the records move to ($1). */
	to: DeadLetterStatus;
	/** Who changes them ($2) and why ($3), for the audit events. */
	actor: string;
	reason: string | null;
	/** The statuses a record may move from ($4): the allowed transitions into `to`. */
	from: DeadLetterStatus[];
	/** When set, a record moves only while still at this generation ($5): a take's fence. */
	generation: string | number | null;
}

/**
 * Moves the records that `where` selects to status `to` and writes each one's audit event
 * (`actor`, `reason`) in the same statement; the selection's own parameters start at $6, their
 * values (`whereValues`) bound after the change's. A record moves only from a status in `from`
 * and, when `generation` is set, only while it is still at that generation (a take's fence).
 * Every change increments the generation, so an older take can no longer settle it. Returns one
 * row per selected record: its status now and whether it changed.
 */
const statusChangeSql = (
	store: Store,
	change: StatusChangeInput,
	where: string,
	whereValues: unknown[],
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT id, status, generation FROM ${store.table('dead_letters')} WHERE ${where}
	-- In the park's order (its identity), so a status change and a park never deadlock.
	ORDER BY ${LOCK_ORDER} FOR UPDATE
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = $1, updated_at = now(), generation = d.generation + 1,
	    taken_by = NULL,
	    hold_reason = CASE WHEN $1 = 'held' THEN d.hold_reason END,
	    closed_at = CASE WHEN $1 IN ('replayed', 'resolved', 'abandoned', 'compensated') THEN now() ELSE NULL END
	FROM target t
	WHERE d.id = t.id AND t.status = ANY($4::text[]) AND ($5::bigint IS NULL OR t.generation = $5)
	RETURNING d.id, t.status AS from_status, d.status AS to_status, d.generation
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $2, from_status, to_status, $3 FROM changed
)
SELECT t.id, coalesce(c.to_status, t.status) AS status, t.status AS from_status, c.id IS NOT NULL AS changed,
       coalesce(c.generation, t.generation) AS generation
FROM target t LEFT JOIN changed c ON c.id = t.id`,
	values: [change.to, change.actor, change.reason, change.from, change.generation, ...whereValues],
});

/** Records by `ids`; ids that do not exist are simply not in the result. */
export const updateStatusSql = (
	store: Store,
	input: StatusChangeInput & { ids: string[] },
): SqlQuery => statusChangeSql(store, input, 'id = ANY($6::bigint[])', [input.ids]);

/**
 * The open records of items that have now succeeded (a later delivery of the `keys`, each its
 * scope and key and, where the success must be of the same request, its fingerprint, at `step` of
 * workflow `workflowId`), while each key's record still says succeeded: once
 * a key passed its retention and was claimed again, its letters belong to the new operation, and
 * a success of the old one says nothing of them. Only records waiting for a person, a resume or
 * a replay: one taken by the Replay workflow or an operator is theirs to close. A conflict stays open: the
 * key succeeded with another request (or against another version) than the parked one, and only
 * a person can say which is right. The key records are read locked (FOR SHARE): a claim of the
 * key that committed after this statement began is seen, and a claim that comes later waits,
 * so a renewed operation's failure, parked into the same open record meanwhile, is never closed
 * on the word of the old operation's success. Locked in key order, as claims and settles lock
 * them, so a close and a many-key claim never wait on each other in a circle.
 */
export const closeSucceededSql = (
	store: Store,
	input: StatusChangeInput & {
		keys: Array<{ scope: string; key: string; fingerprint?: string }>;
		workflowId: string;
		step: string;
	},
): SqlQuery =>
	statusChangeSql(
		store,
		input,
		`idempotency_key IN (
		SELECT s.key FROM json_to_recordset($6::json) AS s(scope text, key text, fingerprint text)
		JOIN ${store.table('idempotency_keys')} k ON k.scope = s.scope AND k.key = s.key
		WHERE k.status = 'succeeded' AND (s.fingerprint IS NULL OR k.fingerprint = s.fingerprint)
		ORDER BY k.scope, k.key FOR SHARE OF k)
	AND workflow_id = $7 AND step = $8 AND status IN ('new', 'held', 'replay_requested') AND error_class <> 'conflict'`,
		[JSON.stringify(input.keys), input.workflowId, input.step],
	);

/**
 * Held records whose breaker no longer holds them: their integration's breaker is closed (or its
 * cool-down over) and the integration is not paused. Of one `integration`, or of all (null).
 */
export const releaseBreakerHoldsSql = (
	store: Store,
	input: StatusChangeInput & { integration: string | null },
): SqlQuery =>
	statusChangeSql(
		store,
		input,
		`status = 'held' AND hold_reason = 'breaker' AND ($6::text IS NULL OR integration = $6)
	AND NOT EXISTS (SELECT 1 FROM ${store.table('breakers')} b WHERE b.integration = dead_letters.integration AND b.open_until > now())
	AND NOT EXISTS (SELECT 1 FROM ${store.table('pauses')} p WHERE p.scope = 'integration' AND p.name = dead_letters.integration AND p.paused)`,
		[input.integration],
	);

/**
 * What the store says of the failed step of records `ids` that a replay run took: the status
 * of the write key the record is parked under (its key, in its workflow), and of the event a
 * letter `event:<consumer>:<event ID>` (or its hashed form) names by its business ID. Either is
 * null when the record names no such key or event (a letter of the user's own key, an
 * execution-level record): the store cannot say, and the run's own result decides.
 */
export const replayedStepsSql = (store: Store, input: { ids: string[] }): SqlQuery => ({
	text: `
SELECT d.id, d.status, d.generation, d.step,
       (SELECT k.status FROM ${store.table('idempotency_keys')} k
        WHERE k.key = d.idempotency_key AND k.workflow_id = d.workflow_id
        ORDER BY k.updated_at DESC LIMIT 1) AS key_status,
       (SELECT p.status FROM ${store.table('processed_events')} p
        WHERE d.idempotency_key LIKE 'event:%' AND p.event_id = d.business_id
          AND d.idempotency_key IN (${eventLetterKeySql('p.consumer', 'p.event_id')},
              ${hashedEventLetterKeySql(eventLetterKeySql('p.consumer', 'p.event_id'))})
        LIMIT 1) AS event_status
FROM ${store.table('dead_letters')} d
WHERE d.id = ANY($1::bigint[])`,
	values: [input.ids],
});

/**
 * Takes up to `limit` records asked to be replayed for one replay run (`taker`; `reason`; an
 * optional `workflowId`), atomically: two overlapping runs never take one record. A record
 * another run took more than `staleAfterMinutes` ago without settling it (that run died) is
 * taken again.
 * Each taken record is being fixed, at a new generation that the run's later status change must
 * present, so a late settle of the dead run changes nothing.
 */
export const takeForReplaySql = (
	store: Store,
	input: {
		taker: string;
		reason: string;
		limit: number;
		workflowId: string | null;
		staleAfterMinutes: number;
	},
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT id, status FROM ${store.table('dead_letters')}
	WHERE (status = 'replay_requested'
	       OR (status = 'being_fixed' AND taken_by IS NOT NULL AND taken_by NOT LIKE '${COMPENSATION_TAKER}%'
	           AND updated_at < now() - make_interval(mins => $5)))
	  AND ($4::text IS NULL OR workflow_id = $4)
	ORDER BY updated_at, id
	LIMIT $3
	FOR UPDATE SKIP LOCKED
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'being_fixed', updated_at = now(), generation = d.generation + 1, taken_by = $1
	FROM target t
	WHERE d.id = t.id
	RETURNING d.*, t.status AS from_status
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $1, from_status, 'being_fixed',
	       CASE WHEN from_status = 'being_fixed' THEN $2 || ' (an earlier replay run did not finish)' ELSE $2 END
	FROM changed
)
SELECT * FROM changed ORDER BY updated_at, id`,
	values: [input.taker, input.reason, input.limit, input.workflowId, input.staleAfterMinutes],
});

/** How `taken_by` begins on a record Compensate holds while it reverses its steps. */
export const COMPENSATION_TAKER = 'compensation: ';

/**
 * Compensate holds the record (`id`, while at `generation`, from one of the statuses `from`):
 * being fixed, taken by `compensation: <actor>`, with its audit event, in one statement, so the
 * hold always has an owner and an age and a compensation that died is handed back
 * (returnStaleCompensationsSql). Returns the new generation, none when the record moved.
 */
export const holdForCompensationSql = (
	store: Store,
	input: {
		id: string;
		generation: string;
		actor: string;
		reason: string;
		from: DeadLetterStatus[];
	},
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT id, status, generation FROM ${store.table('dead_letters')} WHERE id = $1 FOR UPDATE
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'being_fixed', updated_at = now(), generation = d.generation + 1, taken_by = $3,
	    hold_reason = NULL, closed_at = NULL
	FROM target t
	WHERE d.id = t.id AND t.generation = $2 AND t.status = ANY($5::text[])
	RETURNING d.id, t.status AS from_status, d.generation
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $4, from_status, 'being_fixed', $6 FROM changed
)
SELECT generation FROM changed`,
	values: [
		input.id,
		input.generation,
		COMPENSATION_TAKER + input.actor,
		input.actor,
		input.from,
		input.reason,
	],
});

/**
 * A Compensate run still holds the record (`id`, at `generation`): its hold is renewed before each
 * reversal, so only a run that stopped or died is handed back as stale.
 */
export const touchCompensationHoldSql = (
	store: Store,
	input: { id: string; generation: string },
): SqlQuery => ({
	text: `
UPDATE ${store.table('dead_letters')} SET updated_at = now()
WHERE id = $1 AND generation = $2 AND status = 'being_fixed'`,
	values: [input.id, input.generation],
});

/**
 * Records Compensate held for longer than `staleAfterMinutes` since it last renewed its hold,
 * without closing or handing them back (its run stopped or died between two reversals): back to new with `reason`, their alert
 * due, each with its audit event, up to `limit` (of `workflowId`, or all when null). What was
 * reversed is in their history; a person checks the target, then compensates again or resolves.
 */
export const returnStaleCompensationsSql = (
	store: Store,
	input: {
		actor: string;
		reason: string;
		staleAfterMinutes: number;
		limit: number;
		workflowId: string | null;
	},
): SqlQuery => ({
	text: `
WITH target AS (
	SELECT id FROM ${store.table('dead_letters')}
	WHERE status = 'being_fixed' AND taken_by LIKE '${COMPENSATION_TAKER}%'
	  AND updated_at < now() - make_interval(mins => $3)
	  AND ($5::text IS NULL OR workflow_id = $5)
	ORDER BY ${LOCK_ORDER}
	LIMIT $4
	FOR UPDATE SKIP LOCKED
), changed AS (
	UPDATE ${store.table('dead_letters')} d
	SET status = 'new', updated_at = now(), generation = d.generation + 1, taken_by = NULL,
	    alert_due = coalesce(d.alert_due, now())
	FROM target t WHERE d.id = t.id
	RETURNING d.id
), audited AS (
	INSERT INTO ${store.table('dead_letter_events')} (dead_letter_id, actor, from_status, to_status, reason)
	SELECT id, $1, 'being_fixed', 'new', $2 FROM changed
)
SELECT id FROM changed ORDER BY id`,
	values: [input.actor, input.reason, input.staleAfterMinutes, input.limit, input.workflowId],
});

/**
 * The open letters of events execution `executionId` has now done (keys `event:<consumer>:<event ID>`, or
 * `event:sha256:<hex>` of that when it is too long to store: eventLetterKey, as the Error handler,
 * Recover and a stopped execution park them): a successful run of an item closes
 * every letter still waiting for it (new, held, asked to be replayed). One taken by the Replay
 * workflow or an operator (being fixed) is theirs to close.
 */
export const closeDoneEventLettersSql = (
	store: Store,
	input: StatusChangeInput & { executionId: string },
): SqlQuery =>
	statusChangeSql(
		store,
		input,
		`idempotency_key IN (
		SELECT k FROM (
			SELECT ${eventLetterKeySql('p.consumer', 'p.event_id')} AS plain FROM ${store.table('processed_events')} p
			WHERE p.execution_id = $6 AND p.status = 'done'
		) e, LATERAL (VALUES (e.plain), (${hashedEventLetterKeySql('e.plain')})) AS v(k))
	AND status IN ('new', 'held', 'replay_requested')`,
		[input.executionId],
	);
