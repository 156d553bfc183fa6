import { ConfigurationError } from '../errors';
import { inRange, LIMITS } from '../limits';
import { maskText, maskValue } from '../masking';
import type { SqlQuery, Store } from '../store';
import { storableText } from '../store/storable';
import {
	claimsSql,
	deadLettersSql,
	deadLetterHistorySql,
	type TraceLookup,
	type TraceMatch,
	writeKeysSql,
} from './sql';
import {
	MAX_QUERY_CHARS,
	Row,
	TRACE_MIN_PART,
	claimEntry,
	containsPattern,
	deadLetterEntry,
	iso,
	overallState,
	text,
	writeEntry,
} from './entries';
import {
	type DeadLetterHistoryEntry,
	type TraceEntry,
	type TraceOptions,
	type TraceResult,
} from './types';

/**
 * "Where is item X?": every record the store holds about one business ID (an event ID, an
 * idempotency key, or a part of one such as `INV-20931`) as one timeline, oldest first: each
 * claim of the event, each write step's key record and each dead letter, with where it stands
 * and a link to the n8n execution that holds or held it.
 */

/**
 * One table's rows: those with the whole ID; when it has none, those containing it. Per table,
 * because an event ID's write keys and dead letters usually carry it inside a longer key
 * (`INV-20931:post`, `event:invoices:INV-20931`).
 */
async function rowsOf(
	store: Store,
	sql: (store: Store, input: TraceLookup) => SqlQuery,
	query: string,
	limit: number,
): Promise<{ rows: Row[]; match: TraceMatch }> {
	// One more than the limit says whether anything was left out.
	const exact = await store.query<Row>(
		sql(store, { match: 'exact', search: query, limit: limit + 1 }),
	);
	if (exact.length > 0 || query.length < TRACE_MIN_PART) return { rows: exact, match: 'exact' };
	const part = await store.query<Row>(
		sql(store, { match: 'part', search: containsPattern(query), limit: limit + 1 }),
	);
	return { rows: part, match: 'part' };
}

async function find(
	store: Store,
	query: string,
	limit: number,
	baseUrl: string | undefined,
): Promise<{ entries: TraceEntry[]; truncated: boolean; exact: boolean }> {
	const [claims, keys, letters] = await Promise.all([
		rowsOf(store, claimsSql, query, limit),
		rowsOf(store, writeKeysSql, query, limit),
		rowsOf(store, deadLettersSql, query, limit),
	]);
	const events =
		letters.rows.length === 0
			? []
			: await store.query<Row>(deadLetterHistorySql(store, { ids: letters.rows.map((l) => l.id) }));
	const historyOf = (id: unknown): DeadLetterHistoryEntry[] =>
		events
			.filter((e) => String(e.dead_letter_id) === String(id))
			.map((e) => ({
				at: iso(e.at)!,
				actor: String(e.actor),
				fromStatus: text(e.from_status),
				toStatus: String(e.to_status),
				reason: text(e.reason),
			}));
	const all: TraceEntry[] = [
		...claims.rows.map((row) => ({ ...claimEntry(row, baseUrl), matched: claims.match })),
		...keys.rows.map((row) => ({ ...writeEntry(row, baseUrl), matched: keys.match })),
		...letters.rows.map((row) => ({
			...deadLetterEntry(row, historyOf(row.id), baseUrl),
			matched: letters.match,
		})),
	];
	// The newest `limit` entries, then oldest first: the timeline reads as the item lived.
	const newest = all.sort((a, b) => b.at.localeCompare(a.at)).slice(0, limit);
	return {
		entries: newest.reverse(),
		truncated: all.length > limit,
		exact: newest.some((e) => e.matched === 'exact'),
	};
}

/**
 * Traces one business ID: in each table, the records whose event ID, write key or dead letter's
 * idempotency key is the ID exactly; where none is, those that contain it (case-insensitive, at
 * least TRACE_MIN_PART characters). Values are masked again on the way out, so a record
 * written by any other path (SQL by hand, a restore) shows no secret either.
 */
export async function traceItem(
	store: Store,
	businessId: string,
	options: TraceOptions = {},
): Promise<TraceResult> {
	const query = storableText(typeof businessId === 'string' ? businessId : '').trim();
	if (!query)
		throw new ConfigurationError(
			'Trace needs a business ID',
			'Set Business ID to an event ID, an idempotency key or a part of one, e.g. INV-20931.',
		);
	if (query.length > MAX_QUERY_CHARS)
		throw new ConfigurationError(
			`The business ID is ${query.length} characters long; at most ${MAX_QUERY_CHARS} are searched`,
			'Search by the event ID or key itself, or a part of it.',
		);
	const limit = options.limit === undefined ? 200 : inRange(options.limit, LIMITS.traceLimit);
	const found = await find(store, query, limit, options.baseUrl);
	const match = found.entries.length === 0 ? 'none' : found.exact ? 'exact' : 'part';
	const entries = maskValue(found.entries, options.maskFields);
	// The answer names what was searched, masked like everything else it carries: the ID typed
	// may hold a credential (a pasted log line), and the answer goes into n8n's execution data.
	return {
		query: maskText(query, options.maskFields),
		match,
		state: overallState(entries),
		entries,
		truncated: found.truncated,
		limit,
	};
}
