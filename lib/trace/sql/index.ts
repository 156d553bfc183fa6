import type { SqlQuery, Store } from '../../store';

/**
 * The SQL of Trace, one named builder per statement. Every value is bound; the only identifier
 * spliced in is the validated, quoted schema name.
 *
 * Each table is asked twice at most: by the whole ID (`search` is the ID, served by a btree
 * index), and only when nothing matched, by a part of it (`search` is an ILIKE pattern over the
 * lowered ID, served by a trigram index over lower(...), migration 000020: over the column itself
 * the planner took it for plain equality too). `limit` is the row limit; each statement returns
 * the newest rows first, so a truncated answer keeps the latest of the item's life.
 */
export type TraceMatch = 'exact' | 'part';

/** One table's lookup: how `search` matches ($1 in every lookup), and the row limit ($2). */
export interface TraceLookup {
	match: TraceMatch;
	search: string;
	limit: number;
}

/** The values every lookup binds, in the order of its placeholders. */
const lookupValues = (input: TraceLookup): unknown[] => [input.search, input.limit];

const where = (column: string, match: TraceMatch): string =>
	match === 'exact' ? `${column} = $1` : `lower(${column}) ILIKE $1`;

/**
 * The whole ID is also looked up as the business ID a record keeps beside its key (a write keyed
 * by business identity stores a hash as its key); a part of one only in the key, which its
 * trigram index serves.
 */
const whereKeyed = (column: string, match: TraceMatch): string =>
	match === 'exact' ? `(${column} = $1 OR business_id = $1)` : `lower(${column}) ILIKE $1`;

/**
 * Every claim of the event (one per consumer): who holds it, until when, and how it ended. A
 * claim whose execution n8n reported crashed is held by no execution until Recover takes it: the
 * execution shown is then the one that held it last.
 */
export const claimsSql = (store: Store, input: TraceLookup): SqlQuery => ({
	text: `
SELECT consumer, event_id, status, workflow_id,
       coalesce(execution_id, previous_executions[cardinality(previous_executions)]) AS execution_id,
       origin_execution_id, generation,
       claimed_at, lease_until, completed_at, completed_by, recover_attempts, last_error,
       payload IS NOT NULL AS payload_kept, payload_bytes,
       (status = 'in_progress' AND lease_until < now()) AS lease_lapsed
FROM ${store.table('processed_events')}
WHERE ${where('event_id', input.match)}
ORDER BY claimed_at DESC, consumer
LIMIT $2`,
	values: lookupValues(input),
});

/**
 * Every write key: its step, attempts and their history, the last error (masked when it was
 * stored) and the saved response's status and size, never the response itself.
 */
export const writeKeysSql = (store: Store, input: TraceLookup): SqlQuery => ({
	text: `
SELECT scope, key, node, status, workflow_id, execution_id, attempts, history, last_error,
       response_status, octet_length(response_body) AS response_bytes, response_truncated,
       created_at, updated_at, completed_at, lease_until,
       (status = 'in_progress' AND lease_until < now()) AS lease_lapsed
FROM ${store.table('idempotency_keys')}
WHERE ${whereKeyed('key', input.match)}
ORDER BY created_at DESC, scope
LIMIT $2`,
	values: lookupValues(input),
});

/** Every dead letter by its idempotency key (the business ID it was parked under), or its business ID. */
export const deadLettersSql = (store: Store, input: TraceLookup): SqlQuery => ({
	text: `
SELECT id, workflow_id, workflow_name, execution_id, step, idempotency_key, run_link, error_class,
       error_message, error_status, attempts, failure_count, status, hold_reason, parked_at,
       last_failed_at, closed_at
FROM ${store.table('dead_letters')}
WHERE ${input.match === 'exact' ? whereKeyed('idempotency_key', input.match) : `idempotency_key IS NOT NULL AND ${where('idempotency_key', input.match)}`}
ORDER BY parked_at DESC, id DESC
LIMIT $2`,
	values: lookupValues(input),
});

/** The audit trail of the dead letters found, oldest first. */
export const deadLetterHistorySql = (store: Store, input: { ids: unknown[] }): SqlQuery => ({
	text: `
SELECT dead_letter_id, at, actor, from_status, to_status, reason
FROM ${store.table('dead_letter_events')}
WHERE dead_letter_id = ANY($1::bigint[])
ORDER BY dead_letter_id, id`,
	values: [input.ids],
});
