import { maskText } from '../masking';
import type { Store, Transaction } from '../store';
import { causeKey, normalizedMessage } from './cause';
import { alertRecord, composeAlert, first, isHeld } from './compose';
import {
	AlertRoute,
	ImpactClass,
	type ImpactRule,
	impactOf,
	type OwnerHours,
	routeOf,
} from './routing';
import {
	alertLettersSql,
	assignLettersSql,
	dueUpdatesSql,
	emptyIssuesSql,
	lockCausesSql,
	logAlertSql,
	markNotifiedSql,
	openIssuesListSql,
	openIssuesSql,
	recountIssuesSql,
	resolveIssueSql,
	sentLastHourSql,
	takeHeldSql,
} from './sql';

/**
 * Alerts that wake someone only when they must (seed 001: "page out of hours only for money and
 * customer-facing failures; batch the rest into a daily digest"), grouped by cause so that one
 * mapping error that parks 300 leads is one alert, not 300, and resolved when the cause is gone.
 *
 * - **Notify** (the bundled Alert workflow): each parked item joins its cause's open issue. The
 *   item that opens an issue triggers an alert; later items update its count, at most once per
 *   interval; the route (page, channel, digest) is decided when the issue opens, from the item's
 *   impact class and its owner's working hours. An input that is no dead letter (a heartbeat's
 *   change) alerts on its own, routed the same way.
 * - **Sweep** (every minute, in the bundled Recover workflow): resolves the issues none of whose
 *   items is open any more (a `resolve` with the same dedup key), sends the updates that waited
 *   out their interval, and one summary per owner and hour of the alerts the ceiling held back.
 * - **Flood control**: past the owner's ceiling per hour nothing more is sent to them that hour;
 *   what was held back is logged and summarized. Nothing is dropped from the store.
 */

export interface AlertSettings {
	impactRules?: ImpactRule[];
	owners?: OwnerHours[];
	/** At most one update per issue this often (default 15 minutes). */
	updateIntervalSeconds?: number;
	/** Alerts sent to one owner per hour before the rest are held back (default 30). */
	ceilingPerHour?: number;
	/** The operator console's address, for links to an issue's items. */
	consoleUrl?: string;
	maskFields?: string[];
	/** The time the route is decided for (default now). */
	at?: Date;
}

type AlertAction = 'trigger' | 'update' | 'resolve' | 'summary';

/** One alert to send: the text for a channel, and the same as a PagerDuty Events v2 event. */
export interface Notification {
	kind: 'alert';
	action: AlertAction;
	route: 'page' | 'channel';
	/** Stable per issue (PagerDuty style): trigger, updates and resolve share it. */
	dedupKey: string;
	severity: 'critical' | 'warning' | 'info';
	owner: string;
	impact: ImpactClass | 'summary';
	text: string;
	issue?: {
		id: string;
		items: number;
		openItems: number;
		firstItem: string | null;
		lastItem: string | null;
		openedAt: string;
		link: string | null;
	};
	/** The Events v2 body without its routing key (the sending node adds it). */
	pagerDuty: {
		event_action: 'trigger' | 'resolve';
		dedup_key: string;
		payload: { summary: string; source: string; severity: string; custom_details: object };
	};
}

/** What Notify made of one input item: the alerts it sends (none when grouped into an earlier one). */
export interface NotifyResult {
	index: number;
	notifications: Notification[];
	/** Routed to the daily digest: no alert now. */
	digest?: boolean;
	/** The issue the item joined. */
	issueId?: string;
	/** Its letter was closed before the alert (its item succeeded meanwhile): nobody is told. */
	closed?: boolean;
}

export type IssueRow = {
	id: string;
	cause: string;
	route: string;
	impact: string;
	owner: string;
	workflow_id: string | null;
	workflow_name: string | null;
	step: string | null;
	error_class: string | null;
	message: string;
	headline: string;
	first_item: string | null;
	last_item: string | null;
	items: number;
	open_items: number;
	opened_at: Date;
	last_parked_at: Date;
	notified_items: number;
	notified_at: Date | null;
	update_interval_seconds: number;
	ceiling: number;
	link_base: string | null;
};

const DEFAULT_INTERVAL = 15 * 60;
const DEFAULT_CEILING = 30;

/** The console's list of an issue's items. */
const issueLink = (row: Pick<IssueRow, 'id' | 'link_base'>): string | null =>
	row.link_base ? `${row.link_base}?issue=${encodeURIComponent(String(row.id))}` : null;

/** The dead letter an input item is (or carries), if any. */
function letterIdOf(input: unknown): string | undefined {
	const json = (input ?? {}) as Record<string, unknown>;
	const parked = json._deadLetter as Record<string, unknown> | undefined;
	const id =
		(parked && typeof parked === 'object' ? parked.id : undefined) ??
		json.deadLetterId ??
		(json.errorClass !== undefined || json.error_class !== undefined ? json.id : undefined);
	const text = id === undefined || id === null ? '' : String(id);
	return /^\d+$/.test(text) ? text : undefined;
}

function notification(
	action: AlertAction,
	route: 'page' | 'channel',
	dedupKey: string,
	owner: string,
	impact: Notification['impact'],
	text: string,
	source: string,
	issue?: Notification['issue'],
): Notification {
	const severity = action === 'resolve' ? 'info' : route === 'page' ? 'critical' : 'warning';
	return {
		kind: 'alert',
		action,
		route,
		dedupKey,
		severity,
		owner,
		impact,
		text,
		issue,
		pagerDuty: {
			event_action: action === 'resolve' ? 'resolve' : 'trigger',
			dedup_key: dedupKey,
			payload: {
				summary: text.split('\n')[0].slice(0, 1024),
				source,
				severity: action === 'resolve' ? 'info' : route === 'page' ? 'critical' : 'warning',
				custom_details: { text, owner, impact, issue },
			},
		},
	};
}

function issueOf(row: IssueRow): NonNullable<Notification['issue']> {
	return {
		id: String(row.id),
		items: row.items,
		openItems: row.open_items,
		firstItem: row.first_item,
		lastItem: row.last_item,
		openedAt: new Date(row.opened_at).toISOString(),
		link: issueLink(row),
	};
}

const issueKey = (id: string) => `n8n-reliability:issue:${id}`;

/** The alert of an issue: its route, dedup key, owner, impact and source all come from its row. */
const issueNotification = (action: AlertAction, row: IssueRow, text: string): Notification =>
	notification(
		action,
		row.route as 'page' | 'channel',
		issueKey(String(row.id)),
		row.owner,
		row.impact as ImpactClass,
		text,
		row.workflow_name ?? row.workflow_id ?? 'n8n',
		issueOf(row),
	);

function updateText(row: IssueRow): string {
	const link = issueLink(row);
	return [
		`${row.headline}: ${row.items} items of the same cause (${row.open_items} open) since ${new Date(row.opened_at).toISOString()}`,
		`Cause: ${[row.step, row.error_class].filter(Boolean).join(', ')}: ${row.message}`,
		`First: ${row.first_item ?? 'n/a'}; latest: ${row.last_item ?? 'n/a'}`,
		`All of them: ${link ?? 'the console, filtered by this issue'}`,
		`Next action (${row.owner}): fix the cause once, then replay the issue's items as a batch from the console`,
	].join('\n');
}

const resolveText = (row: IssueRow): string =>
	`Resolved: ${row.headline}: none of its ${row.items} item${row.items === 1 ? '' : 's'} is open any more`;

/** Sends (logs) or holds back a notification by the owner's ceiling; returns whether it goes out. */
async function underCeiling(
	store: Store,
	tx: Transaction | Store,
	n: Notification,
	issueId: string | null,
	ceiling: number,
): Promise<boolean> {
	// A resolve always goes out: a held one would leave a page open for ever.
	if (n.action !== 'resolve') {
		const [{ n: sent }] = await tx.query<{ n: number }>(sentLastHourSql(store, { owner: n.owner }));
		if (sent >= ceiling) {
			await tx.query(
				logAlertSql(store, { owner: n.owner, issueId, action: 'held', route: n.route }),
			);
			return false;
		}
	}
	await tx.query(logAlertSql(store, { owner: n.owner, issueId, action: n.action, route: n.route }));
	return true;
}

/** Notify: the alerts of a batch of parked items (and heartbeat changes), grouped by cause. */
export async function notifyAlerts(
	store: Store,
	inputs: unknown[],
	settings: AlertSettings = {},
): Promise<NotifyResult[]> {
	const at = settings.at ?? new Date();
	const mask = (text: string) => maskText(text, settings.maskFields);
	const results: NotifyResult[] = inputs.map((_, index) => ({ index, notifications: [] }));
	// What each input's dead letter says of it, under what the input itself says.
	const letterIds = [...new Set(inputs.map(letterIdOf).filter((id): id is string => !!id))];
	const letters = new Map(
		(letterIds.length
			? await store.query<Record<string, unknown>>(alertLettersSql(store, { ids: letterIds }))
			: []
		).map((row) => [String(row.id), row]),
	);
	const entries = inputs.flatMap((input, index) => {
		if (isHeld(input)) return [];
		const letterId = letterIdOf(input);
		const row = letterId ? letters.get(letterId) : undefined;
		// Another delivery, a replay or a recovery finished the item between its park and this
		// alert: there is nothing for a person to do, and an alert would send them to check it.
		if (row && row.is_open === false) {
			results[index].closed = true;
			return [];
		}
		delete row?.is_open;
		// The letter's own facts win: an item out of Park is its payload, whose fields (an owner,
		// a step of the business) are not the record's.
		const facts = row
			? Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null))
			: {};
		const withLetter = row ? { ...alertRecord(input), ...facts, deadLetterId: letterId } : input;
		const alert = composeAlert(withLetter, { maskFields: settings.maskFields });
		const r = alertRecord(withLetter);
		const workflowId = first(r, 'workflowId', 'workflow_id') || null;
		const workflowName = first(r, 'workflowName', 'workflow_name') || null;
		const integration = first(r, 'integration') || null;
		const ruled = impactOf(settings.impactRules ?? [], { integration, workflowId, workflowName });
		// A record parked with severity "page" (Park's *Page Now*: money or customer-facing) pages
		// where no rule says otherwise.
		const impact =
			ruled === ImpactClass.unclassified && first(r, 'severity') === 'page'
				? ImpactClass.customer
				: ruled;
		const hours = settings.owners?.find((o) => o.owner === alert.owner);
		const message = first(r, 'message', 'error_message', 'errorMessage') || 'failed';
		return [
			{
				index,
				alert,
				// A letter the store no longer has (purged) alerts on its own.
				letterId: row ? letterId : undefined,
				impact,
				route: routeOf(impact, hours, at),
				cause: causeKey({
					integration,
					workflowId,
					step: first(r, 'step', 'node') || null,
					errorClass: first(r, 'errorClass', 'error_class', 'class') || null,
					message,
				}),
				workflowId,
				workflowName,
				integration,
				step: first(r, 'step', 'node') || null,
				errorClass: first(r, 'errorClass', 'error_class', 'class') || null,
				message: mask(normalizedMessage(message)),
				headline: alert.text.split('\n')[0].replace(/\s*\([^()]*\)$/, ''),
				item: mask(first(r, 'idempotencyKey', 'idempotency_key', 'key', 'itemKey')) || null,
			},
		];
	});
	if (entries.length === 0) return results;
	await store.transaction(async (tx) => {
		// Inputs that are no dead letter (heartbeats) alert on their own, as they always did.
		for (const entry of entries.filter((e) => e.letterId === undefined)) {
			if (entry.route === AlertRoute.digest) {
				results[entry.index].digest = true;
				continue;
			}
			const n = notification(
				'trigger',
				entry.route,
				entry.alert.dedupKey,
				entry.alert.owner,
				entry.impact,
				entry.alert.text,
				entry.workflowName ?? entry.workflowId ?? 'n8n',
			);
			if (await underCeiling(store, tx, n, null, settings.ceilingPerHour ?? DEFAULT_CEILING))
				results[entry.index].notifications.push(n);
		}
		const grouped = entries.filter(
			(e): e is typeof e & { letterId: string } => e.letterId !== undefined,
		);
		if (grouped.length === 0) return;
		const causes = [...new Set(grouped.map((e) => e.cause))].sort();
		await tx.query(lockCausesSql({ causes }));
		const issues = await tx.query<{ id: string; cause: string; opened: boolean }>(
			openIssuesSql(store, {
				issues: grouped.map((e, ord) => ({
					ord,
					cause: e.cause,
					route: e.route,
					impact: e.impact,
					owner: e.alert.owner,
					workflow_id: e.workflowId,
					workflow_name: e.workflowName,
					step: e.step,
					integration: e.integration,
					error_class: e.errorClass,
					message: e.message,
					headline: e.headline,
					text: e.alert.text,
					item: e.item,
					update_interval_seconds: settings.updateIntervalSeconds ?? DEFAULT_INTERVAL,
					ceiling: settings.ceilingPerHour ?? DEFAULT_CEILING,
					link_base: settings.consoleUrl ?? null,
				})),
			}),
		);
		const issueOfCause = new Map(issues.map((i) => [i.cause, i]));
		await tx.query(
			assignLettersSql(store, {
				letters: grouped.map((e) => ({ id: e.letterId, issue: issueOfCause.get(e.cause)!.id })),
			}),
		);
		const latest: Record<string, string | null> = {};
		for (const e of grouped) latest[issueOfCause.get(e.cause)!.id] = e.item;
		const rows = await tx.query<IssueRow>(
			recountIssuesSql(store, { issueIds: issues.map((i) => i.id), latestItems: latest }),
		);
		const rowOf = new Map(rows.map((row) => [String(row.id), row]));
		const decided = new Set<string>();
		for (const entry of grouped) {
			const issue = issueOfCause.get(entry.cause)!;
			const row = rowOf.get(String(issue.id))!;
			results[entry.index].issueId = String(issue.id);
			if (decided.has(String(issue.id))) continue;
			decided.add(String(issue.id));
			if (row.route === AlertRoute.digest) {
				results[entry.index].digest = true;
				await tx.query(markNotifiedSql(store, { issueId: row.id, items: row.items }));
				continue;
			}
			let n: Notification | undefined;
			if (issue.opened)
				n = issueNotification(
					'trigger',
					row,
					[
						entry.alert.text,
						`Issue: #${row.id}, where later items of the same cause are counted${issueLink(row) ? `: ${issueLink(row)}` : ''}`,
					].join('\n'),
				);
			else if (
				row.items > row.notified_items &&
				row.notified_at !== null &&
				Date.now() - new Date(row.notified_at).getTime() >= row.update_interval_seconds * 1000
			)
				n = issueNotification('update', row, updateText(row));
			if (!n) continue;
			await tx.query(markNotifiedSql(store, { issueId: row.id, items: row.items }));
			if (await underCeiling(store, tx, n, String(row.id), row.ceiling))
				results[entry.index].notifications.push(n);
		}
	});
	return results;
}

/**
 * Sweep: resolves of issues whose items are all closed, updates that waited out their interval,
 * held-back summaries. It needs no settings: each issue keeps the interval, ceiling and console
 * link Notify opened it with.
 */
export async function sweepAlerts(store: Store, limit = 500): Promise<Notification[]> {
	const out: Notification[] = [];
	const empty = await store.query<{ id: string; cause: string }>(emptyIssuesSql(store, { limit }));
	for (const issue of empty) {
		await store.transaction(async (tx) => {
			await tx.query(lockCausesSql({ causes: [issue.cause] }));
			const [row] = await tx.query<IssueRow>(resolveIssueSql(store, { issueId: issue.id }));
			// Resolved meanwhile by another sweep, or an item joined it under the lock first.
			if (!row || row.route === AlertRoute.digest || row.notified_at === null) return;
			const n = issueNotification('resolve', row, resolveText(row));
			await underCeiling(store, tx, n, String(row.id), row.ceiling);
			out.push(n);
		});
	}
	const due = await store.query<{ id: string }>(dueUpdatesSql(store, { limit }));
	if (due.length > 0)
		await store.transaction(async (tx) => {
			const rows = await tx.query<IssueRow>(
				recountIssuesSql(store, { issueIds: due.map((d) => d.id), latestItems: {} }),
			);
			for (const row of rows) {
				if (row.items <= row.notified_items) continue;
				const n = issueNotification('update', row, updateText(row));
				await tx.query(markNotifiedSql(store, { issueId: row.id, items: row.items }));
				if (await underCeiling(store, tx, n, String(row.id), row.ceiling)) out.push(n);
			}
		});
	const held = await store.query<{
		owner: string;
		held: number;
		since: Date;
		route: string;
		link_base: string | null;
	}>(takeHeldSql(store));
	for (const h of held) {
		const text = `${h.held} alert${h.held === 1 ? '' : 's'} for ${h.owner} held back since ${new Date(h.since).toISOString()}: over the hourly ceiling. Nothing is lost: every item is in the dead-letter store and the console${h.link_base ? ` (${h.link_base})` : ''}.`;
		const n = notification(
			'summary',
			h.route === 'page' ? 'page' : 'channel',
			`n8n-reliability:held:${h.owner}:${new Date(h.since).toISOString().slice(0, 13)}`,
			h.owner,
			'summary',
			text,
			'n8n-reliability',
		);
		await store.query(
			logAlertSql(store, { owner: h.owner, issueId: null, action: 'summary', route: n.route }),
		);
		out.push(n);
	}
	return out;
}

/** The open issues, newest first (the console's Issues page, the digest's list). */
export async function openIssues(
	store: Store,
	options: { route?: 'page' | 'channel' | 'digest'; limit?: number } = {},
): Promise<IssueRow[]> {
	return await store.query<IssueRow>(
		openIssuesListSql(store, { route: options.route ?? null, limit: options.limit ?? 100 }),
	);
}
