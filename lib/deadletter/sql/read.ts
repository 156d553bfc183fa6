import type { SqlQuery, Store } from '../../store';

export const getByIdSql = (store: Store, input: { ids: string[] }): SqlQuery => ({
	text: `
SELECT * FROM ${store.table('dead_letters')} WHERE id = ANY($1::bigint[])`,
	values: [input.ids],
});

export const getByKeySql = (store: Store, input: { keys: string[] }): SqlQuery => ({
	text: `
SELECT * FROM ${store.table('dead_letters')} WHERE idempotency_key = ANY($1::text[]) ORDER BY parked_at DESC`,
	values: [input.keys],
});

/**
 * The workflow version seen by the newest failure at a step (`workflowId`, `step`) parked
 * `after` a time: what a record's own version is compared with.
 */
export const latestSourceVersionSql = (
	store: Store,
	input: { workflowId: unknown; step: unknown; after: unknown },
): SqlQuery => ({
	text: `
SELECT source_version, last_failed_at FROM ${store.table('dead_letters')}
WHERE workflow_id = $1 AND step = $2 AND source_version IS NOT NULL AND last_failed_at > $3
ORDER BY last_failed_at DESC LIMIT 1`,
	values: [input.workflowId, input.step, input.after],
});

export const historySql = (store: Store, input: { ids: unknown[] }): SqlQuery => ({
	text: `
SELECT dead_letter_id, at, actor, from_status, to_status, reason
FROM ${store.table('dead_letter_events')} WHERE dead_letter_id = ANY($1::bigint[]) ORDER BY dead_letter_id, id`,
	values: [input.ids],
});

/** The filters of List and Count, as bound ($1 to $10): each null switches its condition off. */
export interface ListFilterInput {
	statuses: string[] | null;
	workflowId: string | null;
	step: string | null;
	errorClass: string | null;
	owner: string | null;
	integration: string | null;
	/** Only items parked at or before this time. */
	parkedBefore: Date | null;
	/** Text in the error message. */
	search: string | null;
	/** Only items of these teams (their owner) and items without an owner. */
	ownedBy: string[] | null;
	issueId: string | null;
}

/** The filters' values, in the order of filterWhere's placeholders. */
const filterValues = (filter: ListFilterInput): unknown[] => [
	filter.statuses,
	filter.workflowId,
	filter.step,
	filter.errorClass,
	filter.owner,
	filter.integration,
	filter.parkedBefore,
	filter.search,
	filter.ownedBy,
	filter.issueId,
];

/** Filters are all optional; each NULL parameter switches its condition off. */
const filterWhere = `
WHERE ($1::text[] IS NULL OR status = ANY($1))
  AND ($2::text IS NULL OR workflow_id = $2)
  AND ($3::text IS NULL OR step = $3)
  AND ($4::text IS NULL OR error_class = $4)
  AND ($5::text IS NULL OR owner = $5)
  AND ($6::text IS NULL OR integration = $6)
  AND ($7::timestamptz IS NULL OR parked_at <= $7)
  AND ($8::text IS NULL OR error_message ILIKE '%' || $8 || '%')
  AND ($9::text[] IS NULL OR coalesce(btrim(owner), '') = '' OR btrim(owner) = ANY($9))
  AND ($10::bigint IS NULL OR issue_id = $10)`;

export const listSql = (
	store: Store,
	input: { filter: ListFilterInput; limit: number },
): SqlQuery => ({
	text: `
SELECT id, workflow_id, workflow_name, execution_id, step, item_index, idempotency_key, run_link, integration,
       error_class, error_message, error_status, attempts, failure_count, already_happened, impact, owner,
       severity, status, first_failed_at, last_failed_at, parked_at, closed_at, retry_after
FROM ${store.table('dead_letters')}${filterWhere}
ORDER BY parked_at DESC, id DESC
LIMIT $11`,
	values: [...filterValues(input.filter), input.limit],
});

/** How many records match the same filters as List, without a limit. */
export const countSql = (store: Store, input: { filter: ListFilterInput }): SqlQuery => ({
	text: `
SELECT count(*)::int AS n FROM ${store.table('dead_letters')}${filterWhere}`,
	values: filterValues(input.filter),
});

/** Held records (their integration paused or its breaker open), counted per integration. */
export const heldByIntegrationSql = (store: Store): SqlQuery => ({
	text: `
SELECT coalesce(integration, '') AS integration, count(*)::int AS held
FROM ${store.table('dead_letters')} WHERE status = 'held' GROUP BY 1 ORDER BY 1`,
	values: [],
});

/**
 * The steps of records `ids` whose effect Compensate reversed (their key record is compensated): a
 * record with any is never replayed, which would re-run its failed step on top of reversed ones.
 */
export const compensatedStepsSql = (store: Store, input: { ids: string[] }): SqlQuery => ({
	text: `
SELECT d.id, s.step, s.key, k.compensated_at, k.compensated_by
FROM ${store.table('dead_letters')} d
CROSS JOIN LATERAL jsonb_to_recordset(d.steps) AS s(scope text, key text, step text)
JOIN ${store.table('idempotency_keys')} k ON k.scope = s.scope AND k.key = s.key AND k.status = 'compensated'
WHERE d.id = ANY($1::bigint[])
ORDER BY d.id, k.compensated_at`,
	values: [input.ids],
});
