import { afterSql, deleteDoomed, type SqlQuery, type Store } from '../../store';
import type { Plan } from '../settle';

/**
 * The SQL of the Transactional Outbox, one named builder per statement. Values are bound; the
 * only identifier spliced in is the validated, quoted schema name (through `store.table`).
 * Every time comes from the database clock, so leases agree across workers.
 */

/**
 * Serialises writers of the same (destination, ordering key) until their transaction ends, so
 * that per ordering key the ids (the send order) are handed out in commit order: without it, a
 * writer could take id 10, commit after another writer's id 11, and 11 would be sent first.
 * The locks are taken before any business statement and in the order of their keys, so two runs
 * that share keys cannot deadlock on them. `keys`: the ordering keys, `schema`: the store's
 * schema (locks are per store).
 */
export const lockOrderingKeysSql = (input: { keys: string[]; schema: string }): SqlQuery => ({
	text: `
SELECT count(pg_advisory_xact_lock(k)) AS locked
FROM (
	SELECT DISTINCT hashtextextended('n8n_reliability.outbox:' || $2::text || ':' || key, 0) AS k
	FROM unnest($1::text[]) AS key
	ORDER BY k
) AS keys`,
	values: [input.keys, input.schema],
});

/**
 * Under continue-on-fail each item of a Write runs under this savepoint: a failing item is rolled
 * back to it alone, and the run's other items commit together.
 */
export const itemSavepointSql = (): SqlQuery => ({ text: 'SAVEPOINT outbox_item', values: [] });
export const releaseItemSavepointSql = (): SqlQuery => ({
	text: 'RELEASE SAVEPOINT outbox_item',
	values: [],
});
export const rollbackToItemSavepointSql = (): SqlQuery => ({
	text: 'ROLLBACK TO SAVEPOINT outbox_item',
	values: [],
});

/**
 * Adds messages in input order (their ids are their sequence). A key already written for the
 * destination adds nothing: the caller compares fingerprints to tell a duplicate from a conflict.
 */
export const insertMessagesSql = (
	store: Store,
	input: {
		messages: Array<{
			ord: number;
			destination: string;
			method: string;
			url: string;
			headers: Record<string, string>;
			body: unknown;
			idempotency_key: string;
			fingerprint: string;
			ordering_key: string | null;
			workflow_id: string | null;
			execution_id: string | null;
			node: string | null;
		}>;
	},
): SqlQuery => ({
	text: `
WITH input AS (
	SELECT * FROM json_to_recordset($1::json) AS t(
		ord int, destination text, method text, url text, headers json, body json, idempotency_key text,
		fingerprint text, ordering_key text, workflow_id text, execution_id text, node text)
)
INSERT INTO ${store.table('outbox_messages')} (
	destination, method, url, headers, body, idempotency_key, fingerprint, ordering_key,
	workflow_id, execution_id, node)
SELECT destination, method, url, coalesce(headers, '{}'), body, idempotency_key, fingerprint, ordering_key,
       workflow_id, execution_id, node
FROM input ORDER BY ord
ON CONFLICT (destination, idempotency_key) DO NOTHING
RETURNING id::text, destination, idempotency_key`,
	values: [JSON.stringify(input.messages)],
});

/** The messages already written under some (destination, key) pairs. */
export const existingMessagesSql = (
	store: Store,
	input: { destinations: string[]; idempotencyKeys: string[] },
): SqlQuery => ({
	text: `
SELECT m.id::text, m.destination, m.idempotency_key, m.fingerprint, m.status
FROM ${store.table('outbox_messages')} m
JOIN unnest($1::text[], $2::text[]) AS k(destination, idempotency_key)
  ON m.destination = k.destination AND m.idempotency_key = k.idempotency_key`,
	values: [input.destinations, input.idempotencyKeys],
});

/**
 * Take: claims up to `limit` takeable messages for `takenBy` under a lease of `leaseSeconds`,
 * optionally only for `destination`. Takeable means pending and due, or in flight with an expired lease
 * (the owner died or is too slow: `available_at` is the lease end while in flight). Each take
 * increments the generation, which fences the previous owner's Complete and Fail.
 *
 * A message with an ordering key is only takeable when no earlier message of its destination and
 * key is pending or in flight, so a key's messages go out one at a time, in order, whatever the
 * number of relays. Why this holds under concurrency: SKIP LOCKED passes over a head message that
 * another taker is claiming, and the message behind it still sees that head as open (pending in
 * the snapshot, in flight once committed), so it is never taken ahead of it. A dead message does
 * not block the ones behind it: it is in the dead-letter store, for a person to decide.
 */
export const takeMessagesSql = (
	store: Store,
	input: { limit: number; takenBy: string; destination: string | null; leaseSeconds: number },
): SqlQuery => ({
	text: `
WITH candidates AS (
	SELECT m.id FROM ${store.table('outbox_messages')} m
	WHERE m.status IN ('pending', 'in_flight')
	  AND m.available_at <= now()
	  AND ($3::text IS NULL OR m.destination = $3)
	  AND (m.ordering_key IS NULL OR NOT EXISTS (
		SELECT 1 FROM ${store.table('outbox_messages')} e
		WHERE e.destination = m.destination AND e.ordering_key = m.ordering_key
		  AND e.id < m.id AND e.status IN ('pending', 'in_flight')))
	ORDER BY m.id
	LIMIT $1
	FOR UPDATE OF m SKIP LOCKED
)
UPDATE ${store.table('outbox_messages')} m SET
	status = 'in_flight',
	generation = m.generation + 1,
	attempts = m.attempts + 1,
	taken_by = $2,
	taken_at = now(),
	lease_until = now() + make_interval(secs => $4),
	available_at = now() + make_interval(secs => $4),
	updated_at = now()
FROM candidates c WHERE m.id = c.id
RETURNING m.id::text, m.destination, m.method, m.url, m.headers, m.body, m.idempotency_key,
          m.ordering_key, m.status, m.generation, m.attempts, m.taken_by, m.lease_until, m.created_at`,
	values: [input.limit, input.takenBy, input.destination, input.leaseSeconds],
});

/** The messages a Complete or Fail names, locked until its transaction ends. */
export const lockMessagesSql = (store: Store, input: { ids: string[] }): SqlQuery => ({
	text: `
SELECT id::text, destination, method, url, headers, body, idempotency_key, ordering_key, status,
       generation, attempts, taken_by, created_at
FROM ${store.table('outbox_messages')}
WHERE id = ANY($1::bigint[])
ORDER BY id
FOR UPDATE`,
	values: [input.ids],
});

/**
 * Applies the settle decisions (`plans`, one per message): done, back to pending after a delay (never
 * before the target's Retry-After; a hold gives back the attempt its take counted), or dead with
 * its dead-letter record; and counts refused settles of superseded owners. Returns each
 * message's new state.
 */
export const applySettlesSql = (store: Store, input: { plans: Plan[] }): SqlQuery => ({
	text: `
WITH d AS (
	SELECT * FROM json_to_recordset($1::json) AS t(
		id bigint, action text, delay_ms bigint, retry_at timestamptz, error_class text, error text,
		error_status int, dead_letter_id text, refund_attempt boolean, superseded int)
)
UPDATE ${store.table('outbox_messages')} m SET
	status = CASE d.action WHEN 'complete' THEN 'done' WHEN 'retry' THEN 'pending'
	                       WHEN 'dead' THEN 'dead' ELSE m.status END,
	available_at = CASE WHEN d.action = 'retry'
		THEN greatest(now() + make_interval(secs => d.delay_ms / 1000.0), coalesce(d.retry_at, now()))
		ELSE m.available_at END,
	lease_until = CASE WHEN d.action IS NULL THEN m.lease_until ELSE NULL END,
	attempts = m.attempts - CASE WHEN coalesce(d.refund_attempt, false) THEN 1 ELSE 0 END,
	completed_at = CASE WHEN d.action IN ('complete', 'dead') THEN now() ELSE m.completed_at END,
	last_error_class = CASE WHEN d.action IN ('retry', 'dead') THEN d.error_class ELSE m.last_error_class END,
	last_error = CASE WHEN d.action IN ('retry', 'dead') THEN d.error ELSE m.last_error END,
	last_error_status = CASE WHEN d.action IN ('retry', 'dead') THEN d.error_status ELSE m.last_error_status END,
	dead_letter_id = coalesce(d.dead_letter_id, m.dead_letter_id),
	superseded_count = m.superseded_count + coalesce(d.superseded, 0),
	last_superseded_at = CASE WHEN coalesce(d.superseded, 0) > 0 THEN now() ELSE m.last_superseded_at END,
	updated_at = now()
FROM d WHERE m.id = d.id
RETURNING m.id::text, m.status, m.generation, m.attempts, m.available_at`,
	values: [JSON.stringify(input.plans)],
});

/**
 * Deletes settled (done or dead) messages settled more than `olderThanDays` days ago, `limit` at
 * a time; says how many it picked and deleted.
 */
export const purgeMessagesSql = (
	store: Store,
	input: { olderThanDays: number; limit: number; after?: string | null },
): SqlQuery => ({
	text: `
WITH doomed AS (
	SELECT ctid, completed_at AS at FROM ${store.table('outbox_messages')}
	WHERE status IN ('done', 'dead') AND completed_at < now() - make_interval(days => $1)
	  AND ${afterSql('completed_at', 3, 'timestamptz')}
	ORDER BY completed_at
	LIMIT $2
	FOR UPDATE SKIP LOCKED
)${deleteDoomed(store.table('outbox_messages'), true)}`,
	values: [input.olderThanDays, input.limit, input.after ?? null],
});
