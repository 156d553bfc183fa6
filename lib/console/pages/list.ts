import { countDeadLetters, deadLetterStats, listDeadLetters } from '../../deadletter';
import {
	ALL_STATUSES,
	type DeadLetterStatus,
	ErrorClass,
	OPEN_STATUSES,
} from '../../deadletter/statuses';
import { maskValue } from '../../masking';
import { type Filters, filterParams, listFilter } from '../filters';
import { duration, html, query } from '../html';
import { ageOf, hidden, layout, STATUS_LABELS, statusBadge, truncate } from '../layout';
import { controlRefusal, teamsOf } from '../permissions';
import type { Page, PageContext } from '../types';
import { str } from '../values';

/** The dead-letter list: counts by status, filters, the newest matching items, batch replay. */
const LIST_LIMIT = 200;

export async function listPage(filters: Filters, context: PageContext): Promise<Page> {
	const { store } = context;
	if (
		filters.status !== 'open' &&
		filters.status !== 'all' &&
		!ALL_STATUSES.includes(filters.status as DeadLetterStatus)
	)
		filters.status = 'open';
	const filter = listFilter(filters, LIST_LIMIT);
	// Records are masked when parked; masked again here, so a row written by any other path (SQL
	// by hand, a restore) shows no secret either.
	const [rows, matching, stats] = await Promise.all([
		listDeadLetters(store, filter).then((list) => maskValue(list)),
		countDeadLetters(store, filter),
		deadLetterStats(store, { days: 1, topReasons: 0 }),
	]);
	const chips = OPEN_STATUSES.map(
		(s) =>
			html`<a class="chip" href="${query({ status: s })}">${STATUS_LABELS[s]} <b>${stats.openByStatus[s] ?? 0}</b></a>`,
	);
	const select = (name: string, value: string, options: Array<[string, string]>) =>
		html`<select name="${name}">${options.map(([v, label]) => html`<option value="${v}"${v === value ? html` selected` : ''}>${label}</option>`)}</select>`;
	const statusOptions: Array<[string, string]> = [
		['open', 'open (all open)'],
		...ALL_STATUSES.map((s): [string, string] => [s, STATUS_LABELS[s]]),
		['all', 'all'],
	];
	const reasonOptions: Array<[string, string]> = [
		['', 'any reason'],
		...Object.values(ErrorClass).map((c): [string, string] => [c, c.replace('_', ' ')]),
	];
	const table = rows.length
		? html`<table class="dead-letters"><thead><tr><th>#</th><th>Waiting</th><th>Workflow</th><th>Step</th><th>Reason</th><th>Message</th><th>Owner</th><th>Status</th><th class="num">Attempts</th></tr></thead><tbody>
${rows.map(
	(r) =>
		html`<tr data-id="${String(r.id)}"><td><a href="${query({ view: 'item', id: String(r.id) })}">${String(r.id)}</a></td><td>${duration(ageOf(r.parked_at))}</td><td>${str(r.workflow_name) || str(r.workflow_id)}</td><td>${str(r.step)}</td><td>${str(r.error_class)}</td><td>${truncate(r.error_message)}</td><td>${str(r.owner)}</td><td>${statusBadge(r.status)}</td><td class="num">${str(r.attempts)}</td></tr>`,
)}</tbody></table>`
		: html`<p class="muted">No dead letters match.</p>`;
	const batch =
		matching > 0 &&
		!(context.operator && controlRefusal(teamsOf(context.options), context.operator)) &&
		(filters.status === 'open' || filters.status === 'new' || filters.status === 'being_fixed')
			? html`<form method="post" action="${query(filterParams(filters))}" class="batch">${hidden('action', 'batch_replay')}${hidden('token', context.token)}${Object.entries(filterParams(filters)).map(([k, v]) => (v ? hidden(k, v) : ''))}
<input name="note" placeholder="note (optional)"> <button type="submit">Replay all matching (new and being fixed)</button></form>`
			: '';
	const content = html`<h1>Dead letters</h1><div class="chips">${chips}<span class="chip ${stats.oldestWaitSeconds && stats.oldestWaitSeconds > 86_400 ? 'alert' : ''}">oldest waiting <b>${duration(stats.oldestWaitSeconds)}</b></span></div>
${filters.issue ? html`<p class="issue-filter">Items of issue <b>#${filters.issue}</b> (items parked for one cause). <a href="${query({ view: 'issues' })}">All issues</a></p>` : ''}
<form method="get" class="filters"><input type="hidden" name="view" value="list">${filters.issue ? hidden('issue', filters.issue) : ''}
<label>Status ${select('status', filters.status, statusOptions)}</label>
<label>Workflow <input name="workflow" value="${filters.workflow}" placeholder="workflow id"></label>
<label>Step <input name="step" value="${filters.step}"></label>
<label>Reason ${select('reason', filters.reason, reasonOptions)}</label>
<label>Owner <input name="owner" value="${filters.owner}"></label>
<label>Older than (h) <input name="age" value="${filters.ageHours}" size="4"></label>
<label>Message contains <input name="search" value="${filters.search}"></label>
<button type="submit" class="quiet">Filter</button></form>
<p class="count"><b class="matching">${matching}</b> matching${matching > rows.length ? html`, the newest ${rows.length} shown` : ''}.</p>
${table}${batch}`;
	return { html: layout(context, 'Dead letters', 'list', content) };
}
