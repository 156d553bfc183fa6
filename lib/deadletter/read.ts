import { type Store } from '../store';
import { plainText } from '../describe';
import { inRange, LIMITS, optionalInRange } from '../limits';
import { storableText } from '../store/storable';
import {
	compensatedStepsSql,
	countSql,
	getByIdSql,
	getByKeySql,
	heldByIntegrationSql,
	historySql,
	latestSourceVersionSql,
	listSql,
	type ListFilterInput,
} from './sql';
import { type DeadLetterStatus } from './statuses';
import { isDeadLetterId } from './park';

/** Reading dead letters: by id or key with their audit history, lists, counts, held counts. */

interface DeadLetterEvent {
	at: Date;
	actor: string;
	fromStatus: string | null;
	toStatus: string;
	reason: string | null;
}

export type DeadLetterRecord = Record<string, unknown> & {
	id: string;
	status: DeadLetterStatus;
	history: DeadLetterEvent[];
};

export async function withHistory(
	store: Store,
	rows: Array<Record<string, unknown>>,
): Promise<DeadLetterRecord[]> {
	if (rows.length === 0) return [];
	const events = await store.query<{
		dead_letter_id: string;
		at: Date;
		actor: string;
		from_status: string | null;
		to_status: string;
		reason: string | null;
	}>(historySql(store, { ids: rows.map((r) => r.id) }));
	return rows.map((row) => ({
		...row,
		id: String(row.id),
		status: row.status as DeadLetterStatus,
		history: events
			.filter((e) => String(e.dead_letter_id) === String(row.id))
			.map((e) => ({
				at: e.at,
				actor: e.actor,
				fromStatus: e.from_status,
				toStatus: e.to_status,
				reason: e.reason,
			})),
	}));
}

/** Records by id, with their audit history; ids not found are simply absent. */
export async function getDeadLetters(store: Store, ids: string[]): Promise<DeadLetterRecord[]> {
	const valid = ids.filter(isDeadLetterId);
	if (valid.length === 0) return [];
	return await withHistory(store, await store.query(getByIdSql(store, { ids: valid })));
}

/** A step of a parked item whose effect Compensate reversed. */
export interface CompensatedStep {
	id: string;
	step: string | null;
	key: string;
	compensated_at: Date;
	compensated_by: string | null;
}

/** The compensated steps of records, by record id (records without any are absent). */
export async function compensatedSteps(
	store: Store,
	ids: string[],
): Promise<Map<string, CompensatedStep[]>> {
	const valid = ids.filter(isDeadLetterId);
	const byId = new Map<string, CompensatedStep[]>();
	if (valid.length === 0) return byId;
	for (const row of await store.query<CompensatedStep>(
		compensatedStepsSql(store, { ids: valid }),
	)) {
		const id = String(row.id);
		byId.set(id, [...(byId.get(id) ?? []), { ...row, id }]);
	}
	return byId;
}

/**
 * Why a record whose steps were compensated is not replayed: it names the steps, when and by
 * whom, so a person sees who holds the item's fate.
 */
export function compensatedReplayMessage(id: string, steps: CompensatedStep[]): string {
	const which = steps
		.map(
			(s) =>
				`${s.step ?? s.key} (compensated at ${new Date(s.compensated_at).toISOString()}, by ${s.compensated_by ?? 'an unknown actor'})`,
		)
		.join(', ');
	return `Dead letter ${id} cannot be replayed: Compensate reversed its steps ${which}, and a replay would re-run the failed step on top of them`;
}

/** Records that carry an idempotency key (newest first), with their audit history. */
export async function getDeadLettersByKey(
	store: Store,
	keys: string[],
): Promise<DeadLetterRecord[]> {
	return await withHistory(
		store,
		await store.query(
			getByKeySql(store, { keys: keys.map((key) => storableText(plainText(key))) }),
		),
	);
}

/**
 * Whether the workflow changed since a record was parked: the version seen by a later failure
 * at the same step, when it differs from the record's. Undefined when the record has no version
 * or nothing later was seen (the store cannot know the workflow's current state otherwise).
 */
export async function newerSourceVersion(
	store: Store,
	record: DeadLetterRecord,
): Promise<{ sourceVersion: string; seenAt: Date } | undefined> {
	if (typeof record.source_version !== 'string' || !record.source_version) return undefined;
	const [row] = await store.query<{ source_version: string; last_failed_at: Date }>(
		latestSourceVersionSql(store, {
			workflowId: record.workflow_id,
			step: record.step,
			after: record.last_failed_at,
		}),
	);
	if (!row || row.source_version === record.source_version) return undefined;
	return { sourceVersion: row.source_version, seenAt: row.last_failed_at };
}

export interface ListFilter {
	statuses?: DeadLetterStatus[];
	workflowId?: string;
	step?: string;
	errorClass?: string;
	owner?: string;
	integration?: string;
	/** Only items parked at least this many minutes ago. */
	olderThanMinutes?: number;
	/** Text in the error message. */
	search?: string;
	/** Only items of these teams (their owner) and items without an owner. */
	ownedBy?: string[];
	/** Only the items of this alert issue. */
	issueId?: string;
	limit?: number;
}

function filterInput(filter: ListFilter): ListFilterInput {
	const minutes = optionalInRange(filter.olderThanMinutes, LIMITS.olderThanMinutes);
	const olderThan = minutes ? new Date(Date.now() - minutes * 60_000) : null;
	const text = (value: unknown): string | null =>
		value === undefined || value === null || value === '' ? null : storableText(plainText(value));
	return {
		statuses: filter.statuses?.length
			? filter.statuses.map((s) => storableText(plainText(s)))
			: null,
		workflowId: text(filter.workflowId),
		step: text(filter.step),
		errorClass: text(filter.errorClass),
		owner: text(filter.owner),
		integration: text(filter.integration),
		parkedBefore: olderThan,
		search: text(filter.search),
		ownedBy: filter.ownedBy ? filter.ownedBy.map((team) => storableText(plainText(team))) : null,
		issueId: filter.issueId && /^\d{1,18}$/.test(filter.issueId) ? filter.issueId : null,
	};
}

export async function listDeadLetters(
	store: Store,
	filter: ListFilter = {},
): Promise<Array<Record<string, unknown>>> {
	return await store.query(
		listSql(store, {
			filter: filterInput(filter),
			limit: inRange(filter.limit ?? 100, LIMITS.listLimit),
		}),
	);
}

/** How many records match a filter (the list is limited; the count is not). */
export async function countDeadLetters(store: Store, filter: ListFilter = {}): Promise<number> {
	const [row] = await store.query<{ n: number }>(countSql(store, { filter: filterInput(filter) }));
	return row.n;
}

/** How many records are held, per integration (only integrations that hold any). */
export async function heldByIntegration(
	store: Store,
): Promise<Array<{ integration: string; held: number }>> {
	return await store.query<{ integration: string; held: number }>(heldByIntegrationSql(store));
}
