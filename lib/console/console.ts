import { createHash } from 'node:crypto';
import { listHeartbeats, listPauses, pause, PauseScope, resume } from '../control';
import {
	countDeadLetters,
	deadLetterStats,
	getDeadLetters,
	newerSourceVersion,
	heldByIntegration,
	type ItemStep,
	type ListFilter,
	listDeadLetters,
	updateDeadLetterStatus,
	updateDeadLetterStatuses,
} from '../deadletter/park';
import {
	ALL_STATUSES,
	type DeadLetterStatus,
	ErrorClass,
	OPEN_STATUSES,
} from '../deadletter/statuses';
import { plainText } from '../describe';
import { compensateDeadLetter, fetchCompensationSender } from '../idempotency/compensate';
import { ConfigurationError, ReliabilityError } from '../errors';
import { inRange, LIMITS } from '../limits';
import { maskText, maskValue } from '../masking';
import { storableText } from '../store/storable';
import type { Store } from '../store';
import { parkedPerDayChart } from './chart';
import { duration, escapeHtml, type Html, html, query } from './html';
import { consoleSecret, formToken, formTokenValid } from './secret';
import { traceContent } from './trace';

/**
 * The operator console: the pages and actions an operator needs to pause, inspect, replay and
 * resolve without an engineer. It is served from n8n by a Webhook (behind n8n's webhook
 * authentication) and a Respond to Webhook node; this module turns the webhook's request into
 * the response. Reads are GET pages; actions are form posts that carry a token signed with the
 * store's secret for the signed-in operator and the hour (so another site cannot post them for
 * a signed-in operator), and every action is recorded with the operator's name. Every response
 * forbids framing and carries a Content-Security-Policy that allows only the console's own
 * stylesheet and forms.
 */
export interface ConsoleRequest {
	/** What n8n's Webhook node outputs: headers, query and (parsed) body. */
	headers?: Record<string, unknown>;
	query?: Record<string, unknown>;
	body?: unknown;
}

export interface ConsoleOptions {
	/** A header set by a signing-in proxy (e.g. x-forwarded-user); else the Basic auth user name. */
	operatorHeader?: string;
	title?: string;
	/** How many days the stats page charts. */
	days?: number;
	/** The largest number of records one batch replay changes. */
	batchLimit?: number;
	/** n8n's base URL, for links to executions (the find-an-item page). */
	baseUrl?: string;
}

export interface ConsoleResponse {
	statusCode: number;
	contentType: string;
	body: string;
	/** Headers for every response: no framing, no sniffing, no caching, no referrer elsewhere. */
	headers: Record<string, string>;
	/** Records moved to replay_requested by this request: the workflow runs the Replay workflow when > 0. */
	replayRequested: number;
	operator: string | null;
	action: string | null;
	/** Where a successful action redirects (303, so a reload does not post it again); '' otherwise. */
	location: string;
}

const LIST_LIMIT = 200;
const STATUS_LABELS: Record<string, string> = {
	new: 'new',
	being_fixed: 'being fixed',
	replay_requested: 'replay requested',
	replayed: 'replayed',
	resolved: 'resolved',
	abandoned: 'abandoned',
	held: 'held',
	compensated: 'compensated',
};

/** A request value as text: the first of a repeated one, storable, trimmed. */
const str = (value: unknown): string =>
	storableText(Array.isArray(value) ? str(value[0]) : plainText(value)).trim();

const objectOrEmpty = (value: unknown): Record<string, unknown> =>
	value !== null && typeof value === 'object' && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: {};

/** The Serve options, checked: each names itself and what it takes when it is wrong. */
function checkedOptions(options: ConsoleOptions | undefined): ConsoleOptions {
	const given = objectOrEmpty(options) as ConsoleOptions;
	for (const [field, label] of [
		['operatorHeader', 'Operator Header'],
		['title', 'Title'],
	] as const) {
		const value = given[field];
		if (value !== undefined && value !== null && typeof value !== 'string')
			throw new ConfigurationError(
				`${label} must be text`,
				field === 'operatorHeader'
					? 'Set it to the header your signing-in proxy sets, e.g. x-forwarded-user, or leave it empty.'
					: 'Set it to the text to show in the page header.',
			);
	}
	return {
		...given,
		operatorHeader: given.operatorHeader?.trim() || undefined,
		title: given.title ? storableText(given.title) : undefined,
		days:
			given.days === undefined || given.days === null
				? undefined
				: inRange(given.days, LIMITS.chartDays),
		batchLimit:
			given.batchLimit === undefined
				? undefined
				: inRange(given.batchLimit, { label: 'Batch limit', min: 1, max: 10_000, integer: true }),
	};
}

function header(headers: Record<string, unknown> | undefined, name: string): string {
	if (!headers) return '';
	const wanted = name.toLowerCase();
	for (const [key, value] of Object.entries(headers))
		if (key.toLowerCase() === wanted) return str(value);
	return '';
}

/** The signed-in operator: the proxy's header when configured, else the Basic auth user name. */
export function operatorOf(request: ConsoleRequest, options: ConsoleOptions = {}): string | null {
	if (options.operatorHeader) {
		const fromProxy = header(request.headers, options.operatorHeader);
		if (fromProxy) return fromProxy;
	}
	const authorization = header(request.headers, 'authorization');
	const basic = /^Basic\s+(.+)$/i.exec(authorization);
	if (basic) {
		const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
		const user = decoded.includes(':') ? decoded.slice(0, decoded.indexOf(':')) : decoded;
		if (user.trim()) return user.trim();
	}
	return null;
}

interface Filters {
	status: string;
	workflow: string;
	step: string;
	reason: string;
	owner: string;
	ageHours: string;
	search: string;
}

function filtersOf(source: Record<string, unknown>): Filters {
	return {
		status: str(source.status) || 'open',
		workflow: str(source.workflow),
		step: str(source.step),
		reason: str(source.reason),
		owner: str(source.owner),
		ageHours: str(source.age),
		search: str(source.search),
	};
}

function listFilter(filters: Filters, limit: number): ListFilter {
	const hours = Number(filters.ageHours);
	return {
		statuses:
			filters.status === 'open'
				? OPEN_STATUSES
				: filters.status === 'all'
					? undefined
					: [filters.status as DeadLetterStatus],
		workflowId: filters.workflow || undefined,
		step: filters.step || undefined,
		errorClass: filters.reason || undefined,
		owner: filters.owner || undefined,
		// A filter typed on the page: beyond the longest age the store keeps, it means "all".
		olderThanMinutes:
			Number.isFinite(hours) && hours > 0
				? Math.min(hours * 60, LIMITS.olderThanMinutes.max)
				: undefined,
		search: filters.search || undefined,
		limit,
	};
}

const filterParams = (f: Filters) => ({
	status: f.status === 'open' ? undefined : f.status,
	workflow: f.workflow,
	step: f.step,
	reason: f.reason,
	owner: f.owner,
	age: f.ageHours,
	search: f.search,
});

class ActionRefused extends ReliabilityError {}

interface Flash {
	kind: 'ok' | 'error';
	text: string;
}

interface PageContext {
	store: Store;
	request: ConsoleRequest;
	options: ConsoleOptions;
	operator: string | null;
	token: string;
	flash?: Flash;
}

/** Serves one console request: an action first (when the body names one), then the page. */
export async function handleConsoleRequest(
	store: Store,
	request: ConsoleRequest,
	options: ConsoleOptions = {},
): Promise<ConsoleResponse> {
	options = checkedOptions(options);
	// Whatever the webhook handed over: only objects are read, anything else counts as empty.
	request = {
		headers: objectOrEmpty(request?.headers),
		query: objectOrEmpty(request?.query),
		body: request?.body,
	};
	const operator = operatorOf(request, options);
	const secret = await consoleSecret(store);
	const token = operator ? formToken(secret, operator) : '';
	const q = request.query as Record<string, unknown>;
	const body = objectOrEmpty(request.body);
	const action = str(body.action) || null;
	const context: PageContext = { store, request, options, operator, token };
	let statusCode = 200;
	const replayRequested = 0;
	if (action) {
		try {
			if (!operator)
				throw new ActionRefused(
					'Actions need a signed-in operator',
					'Sign in through the webhook authentication (Basic auth user name) or configure the operator header.',
				);
			if (!formTokenValid(secret, operator, str(body.token)))
				throw new ActionRefused(
					'The form is out of date or came from another page',
					'Reload the page and try again.',
				);
			const done = await runAction(store, action, body, operator, options);
			// Post, redirect, get: the page after an action is a GET, so reloading it posts nothing.
			// The message is chosen by the action's name and counts, never taken as text from the URL.
			const location = query({
				...stringParams(q),
				done: action,
				n: done.count,
				done_id: str(body.id) || undefined,
			});
			return {
				statusCode: 303,
				contentType: 'text/html; charset=utf-8',
				body: html`<!doctype html><meta charset="utf-8">${policyMeta}<p><a href="${location}">${done.message}</a></p>`
					.value,
				headers: SECURITY_HEADERS,
				replayRequested: done.replayRequested,
				operator,
				action,
				location,
			};
		} catch (error) {
			statusCode = error instanceof ActionRefused || error instanceof ReliabilityError ? 422 : 500;
			const hint = error instanceof ReliabilityError && error.hint ? ` ${error.hint}` : '';
			context.flash = {
				kind: 'error',
				text: maskText(`${error instanceof Error ? error.message : String(error)}.${hint}`),
			};
		}
	}
	context.flash ??= doneMessage(q, operator);
	const view = str(q.view) || 'list';
	const page = await renderView(view, q, context).catch((error: unknown) => {
		statusCode = 500;
		return {
			html: layout(
				context,
				'Error',
				view,
				html`<p class="flash error">${maskText(error instanceof Error ? error.message : String(error))}</p>`,
			),
		} as Page;
	});
	if (page.notFound) statusCode = 404;
	return {
		statusCode,
		contentType: 'text/html; charset=utf-8',
		body: page.html.value,
		headers: SECURITY_HEADERS,
		replayRequested,
		operator,
		action,
		location: '',
	};
}

function stringParams(q: Record<string, unknown>): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [key, value] of Object.entries(q))
		if (!['done', 'n', 'done_id'].includes(key)) out[key] = str(value);
	return out;
}

/** The confirmation after a redirect: fixed text per action, with only numbers from the URL. */
function doneMessage(q: Record<string, unknown>, operator: string | null): Flash | undefined {
	const done = str(q.done);
	if (!done) return undefined;
	const id = /^\d+$/.test(str(q.done_id)) ? str(q.done_id) : '';
	const n = /^\d+$/.test(str(q.n)) ? Number(str(q.n)) : 0;
	const by = operator ? ` (by ${operator})` : '';
	const texts: Record<string, string> = {
		replay: `Dead letter ${id} set to replay${by}; the Replay workflow runs it now.`,
		being_fixed: `Dead letter ${id} marked as being fixed${by}.`,
		resolve: `Dead letter ${id} resolved${by}.`,
		abandon: `Dead letter ${id} abandoned${by}.`,
		compensate: `Dead letter ${id} compensated${by}: ${n} step${n === 1 ? '' : 's'} reversed; see its history for the answers.`,
		batch_replay: `${n} dead letter${n === 1 ? '' : 's'} set to replay${by}.`,
		pause: `Paused${by}: its writes are held.`,
		resume: `Resumed${by}; ${n} held item${n === 1 ? '' : 's'} set to replay.`,
	};
	return texts[done] ? { kind: 'ok', text: texts[done] } : undefined;
}

async function runAction(
	store: Store,
	action: string,
	body: Record<string, unknown>,
	operator: string,
	options: ConsoleOptions,
): Promise<{ message: string; replayRequested: number; count: number }> {
	const note = str(body.note);
	const id = str(body.id);
	const statusChange = async (to: DeadLetterStatus, verb: string) => {
		if (!/^\d+$/.test(id))
			throw new ActionRefused(
				`No dead letter chosen to ${verb}`,
				'Open an item and use its buttons.',
			);
		const [current] = await getDeadLetters(store, [id]);
		if (!current)
			throw new ActionRefused(`Dead letter ${id} does not exist`, 'Go back to the list.');
		if (!OPEN_STATUSES.includes(current.status))
			throw new ActionRefused(
				`Dead letter ${id} is already ${STATUS_LABELS[current.status]}`,
				'Closed items take no more actions.',
			);
		if ((to === 'resolved' || to === 'abandoned') && !note)
			throw new ActionRefused(
				`To ${verb} dead letter ${id}, write a note`,
				'Say what was done, or why it is given up; the note goes into its history.',
			);
		await updateDeadLetterStatus(store, { id, to, actor: operator, reason: note || undefined });
		return {
			message: `Dead letter ${id}: ${STATUS_LABELS[to]} (by ${operator}).`,
			replayRequested: to === 'replay_requested' ? 1 : 0,
			count: 1,
		};
	};
	switch (action) {
		case 'compensate': {
			if (!/^\d+$/.test(id))
				throw new ActionRefused(
					'No dead letter chosen to compensate',
					'Open an item and use its buttons.',
				);
			const result = await compensateDeadLetter(
				store,
				{
					id,
					actor: operator,
					reason: note || undefined,
					executionId: `console:${id}:${Date.now()}`,
				},
				fetchCompensationSender(),
			);
			if (result.result === 'already')
				throw new ActionRefused(
					`Dead letter ${id} is already compensated`,
					'Nothing was sent again; its history holds the answers.',
				);
			if (result.result === 'failed')
				throw new ActionRefused(
					`Compensating dead letter ${id} stopped: ${result.failure!.message}`,
					`The failed compensation is parked${result.failure!.deadLetterId ? ` as dead letter ${result.failure!.deadLetterId}` : ''}; fix it, then press Compensate again (what was reversed is not sent again).`,
				);
			return {
				message: `Dead letter ${id} compensated (by ${operator}).`,
				replayRequested: 0,
				count: result.sent.length,
			};
		}
		case 'replay':
			return await statusChange('replay_requested', 'replay');
		case 'being_fixed':
			return await statusChange('being_fixed', 'mark as being fixed');
		case 'resolve':
			return await statusChange('resolved', 'resolve');
		case 'abandon':
			return await statusChange('abandoned', 'abandon');
		case 'batch_replay': {
			const filters = filtersOf(body);
			const limit = options.batchLimit ?? 1000;
			// Only items waiting for a person: held ones wait for their integration to resume.
			const statuses: DeadLetterStatus[] =
				filters.status === 'open' ? ['new', 'being_fixed'] : [filters.status as DeadLetterStatus];
			if (!statuses.every((s) => s === 'new' || s === 'being_fixed'))
				throw new ActionRefused(
					`Items in status "${filters.status}" cannot be replayed in a batch`,
					'Filter on new or being fixed (held items are released by resuming their integration).',
				);
			const rows = await listDeadLetters(store, { ...listFilter(filters, limit), statuses });
			const changed = await updateDeadLetterStatuses(
				store,
				rows.map((row) => String(row.id)),
				{
					to: 'replay_requested',
					actor: operator,
					reason: note || 'batch replay from the console',
				},
			);
			return {
				message: `${changed.length} dead letter${changed.length === 1 ? '' : 's'} set to replay (by ${operator}).`,
				replayRequested: changed.length,
				count: changed.length,
			};
		}
		case 'pause':
		case 'resume': {
			const scope = str(body.scope) || PauseScope.integration;
			const name = str(body.name);
			if (action === 'pause') {
				await pause(store, scope as PauseScope, name, operator, note);
				return {
					message: `${scope} ${name} paused (by ${operator}): its writes are held.`,
					replayRequested: 0,
					count: 0,
				};
			}
			const state = await resume(store, scope as PauseScope, name, operator, note);
			return {
				message: `${scope} ${name} resumed (by ${operator}); ${state.released} held item${state.released === 1 ? '' : 's'} set to replay.`,
				replayRequested: state.released,
				count: state.released,
			};
		}
		default:
			throw new ActionRefused(`Unknown action "${action}"`, 'Use the buttons on the page.');
	}
}

interface Page {
	html: Html;
	notFound?: boolean;
}

async function renderView(
	view: string,
	q: Record<string, unknown>,
	context: PageContext,
): Promise<Page> {
	switch (view) {
		case 'item':
			return await itemPage(str(q.id), context);
		case 'controls':
			return await controlsPage(context);
		case 'stats':
			return await statsPage(context);
		case 'trace':
			return {
				html: layout(
					context,
					'Find an item',
					'trace',
					await traceContent(context.store, str(q.q), context.options.baseUrl),
				),
			};
		default:
			return await listPage(filtersOf(q), context);
	}
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2430;background:#f5f6f8}
header{background:#22303f;color:#fff;padding:10px 20px;display:flex;gap:24px;align-items:center}
header a{color:#cfd8e3;text-decoration:none;padding:4px 8px;border-radius:4px}header a.on{background:#3b4d61;color:#fff}
header .who{margin-left:auto;color:#cfd8e3}
main{padding:16px 20px;max-width:1200px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff}th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}td.num{text-align:right}
.chips{display:flex;gap:8px;flex-wrap:wrap;margin-bottom:12px}.chip{background:#fff;border:1px solid #d6dae0;border-radius:14px;padding:3px 10px}
.chip b{font-size:16px}.chip.alert{border-color:#d9534f;color:#a12622}
form.filters{display:flex;gap:8px;flex-wrap:wrap;align-items:end;margin-bottom:12px}form.filters label{display:flex;flex-direction:column;font-size:12px;color:#5a6573}
input,select,textarea{font:inherit;padding:4px 6px;border:1px solid #c4cad2;border-radius:4px}
button{font:inherit;padding:5px 12px;border-radius:4px;border:1px solid #2f6db5;background:#2f6db5;color:#fff;cursor:pointer}
button.quiet{background:#fff;color:#2f6db5}button.danger{background:#b53a2f;border-color:#b53a2f}
.flash{padding:8px 12px;border-radius:4px;margin-bottom:12px}.flash.ok{background:#e3f4e6;border:1px solid #8fc79a}.flash.error{background:#fbe7e6;border:1px solid #e3a19c}
pre{background:#fff;border:1px solid #e3e6ea;padding:10px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-word}
dl{display:grid;grid-template-columns:200px 1fr;gap:4px 12px;background:#fff;padding:12px;border:1px solid #e3e6ea}dt{color:#5a6573}dd{margin:0}
.status{display:inline-block;padding:1px 8px;border-radius:10px;background:#eef0f3;font-size:12px}
.status.new{background:#fde8c8}.status.held{background:#e4e0f7}.status.replay_requested{background:#d7e8fb}.status.resolved,.status.replayed{background:#dcf1df}.status.abandoned{background:#eee}
.state-up{color:#23803a}.state-late{color:#b36b00;font-weight:600}.state-down,.state-invalid{color:#b53a2f;font-weight:600}
.actions{display:flex;gap:12px;flex-wrap:wrap}.actions form{background:#fff;border:1px solid #e3e6ea;padding:10px;display:flex;flex-direction:column;gap:6px;min-width:220px}
svg.chart .bar{fill:#2f6db5}svg.chart .axis{stroke:#8893a0}svg.chart .label{font-size:11px;fill:#5a6573}
.muted{color:#7a8593}
.state{display:inline-block;padding:1px 8px;border-radius:10px;background:#eef0f3;font-size:12px;white-space:nowrap}.state-in_flight{background:#d7e8fb}.state-done,.state-closed{background:#dcf1df}.state-failed,.state-crashed,.state-unknown{background:#fbe7e6}.state-parked{background:#fde8c8}.state-held{background:#e4e0f7}
ol.attempts,ol.history{margin:4px 0 0;padding-left:18px;color:#5a6573;font-size:12px}
`;

/**
 * The page's only inline content is STYLE (allowed by its hash); no script runs at all and forms
 * post only to the console itself. n8n does not let a webhook response set
 * Content-Security-Policy (it sends its own sandbox policy with HTML), so this policy travels in
 * a <meta> element, where frame-ancestors has no effect: framing is refused by
 * X-Frame-Options: DENY on every response, and a proxy in front may add frame-ancestors 'none'.
 */
const STYLE_HASH = createHash('sha256').update(escapeHtml(STYLE)).digest('base64');
export const CONTENT_SECURITY_POLICY = [
	"default-src 'self'",
	`style-src 'sha256-${STYLE_HASH}'`,
	"img-src 'self' data:",
	"script-src 'none'",
	"object-src 'none'",
	"base-uri 'none'",
	"form-action 'self'",
].join('; ');
const policyMeta = html`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`;
const SECURITY_HEADERS: Record<string, string> = {
	'x-frame-options': 'DENY',
	'x-content-type-options': 'nosniff',
	'referrer-policy': 'same-origin',
	'cache-control': 'no-store',
};

function layout(context: PageContext, title: string, view: string, content: Html): Html {
	const nav = [
		['list', 'Dead letters'],
		['controls', 'Pauses & heartbeats'],
		['stats', 'Stats'],
		['trace', 'Find an item'],
	].map(
		([v, label]) =>
			html`<a href="${query({ view: v })}" class="${v === view ? 'on' : ''}">${label}</a>`,
	);
	const flash = context.flash
		? html`<div class="flash ${context.flash.kind}" role="status">${context.flash.text}</div>`
		: '';
	return html`<!doctype html><html lang="en"><head><meta charset="utf-8">${policyMeta}<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">
<title>${title} · ${context.options.title ?? 'Reliability console'}</title><style>${STYLE}</style></head>
<body><header><strong>${context.options.title ?? 'Reliability console'}</strong><nav>${nav}</nav><span class="who">${context.operator ? html`signed in as <b class="operator">${context.operator}</b>` : 'not signed in'}</span></header>
<main>${flash}${content}</main></body></html>`;
}

const hidden = (name: string, value: string) =>
	html`<input type="hidden" name="${name}" value="${value}">`;
const statusBadge = (status: unknown) =>
	html`<span class="status ${String(status)}">${STATUS_LABELS[String(status)] ?? String(status)}</span>`;
const ageOf = (at: unknown): number | null =>
	at ? (Date.now() - new Date(at as string).getTime()) / 1000 : null;
const truncate = (text: unknown, max = 120): string => {
	const s = text === null || text === undefined ? '' : String(text);
	return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

async function listPage(filters: Filters, context: PageContext): Promise<Page> {
	const { store } = context;
	if (
		filters.status !== 'open' &&
		filters.status !== 'all' &&
		!ALL_STATUSES.includes(filters.status as DeadLetterStatus)
	)
		filters.status = 'open';
	const filter = listFilter(filters, LIST_LIMIT);
	// Records are masked when parked; masked again here for rows parked by older versions.
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
		(filters.status === 'open' || filters.status === 'new' || filters.status === 'being_fixed')
			? html`<form method="post" action="${query(filterParams(filters))}" class="batch">${hidden('action', 'batch_replay')}${hidden('token', context.token)}${Object.entries(filterParams(filters)).map(([k, v]) => (v ? hidden(k, v) : ''))}
<input name="note" placeholder="note (optional)"> <button type="submit">Replay all matching (new and being fixed)</button></form>`
			: '';
	const content = html`<h1>Dead letters</h1><div class="chips">${chips}<span class="chip ${stats.oldestWaitSeconds && stats.oldestWaitSeconds > 86_400 ? 'alert' : ''}">oldest waiting <b>${duration(stats.oldestWaitSeconds)}</b></span></div>
<form method="get" class="filters"><input type="hidden" name="view" value="list">
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

async function itemPage(id: string, context: PageContext): Promise<Page> {
	const [record] = /^\d+$/.test(id) ? await getDeadLetters(context.store, [id]) : [];
	if (!record)
		return {
			html: layout(
				context,
				'Not found',
				'list',
				html`<h1>Dead letter ${id} not found</h1><p><a href="${query({ view: 'list' })}">Back to the list</a></p>`,
			),
			notFound: true,
		};
	const r = maskValue(record) as Record<string, unknown> & typeof record;
	const changed = await newerSourceVersion(context.store, record);
	const payload = JSON.stringify(r.payload, null, 2);
	const runLink = str(r.run_link);
	const field = (label: string, value: unknown) =>
		html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? '–' : String(value)}</dd>`;
	const form = (action: string, label: string, noteRequired: boolean, cls = '') =>
		html`<form method="post" action="${query({ view: 'item', id })}" class="action-${action}">${hidden('action', action)}${hidden('id', id)}${hidden('token', context.token)}
<textarea name="note" rows="2" placeholder="${noteRequired ? 'note (required)' : 'note (optional)'}"${noteRequired ? html` required` : ''}></textarea><button type="submit" class="${cls}">${label}</button></form>`;
	const open = OPEN_STATUSES.includes(r.status);
	const history = html`<table class="history"><thead><tr><th>When</th><th>Who</th><th>From</th><th>To</th><th>Why</th></tr></thead><tbody>
${r.history.map((e) => html`<tr><td>${e.at}</td><td class="actor">${e.actor}</td><td>${e.fromStatus ?? ''}</td><td>${e.toStatus}</td><td class="reason">${e.reason ?? ''}</td></tr>`)}</tbody></table>`;
	const attempts = Array.isArray(r.attempt_history)
		? (r.attempt_history as Array<Record<string, unknown>>)
		: [];
	const attemptTable = attempts.length
		? html`<table class="attempts"><thead><tr><th>When</th><th>Attempt</th><th>Kind</th><th>HTTP</th><th>Class</th><th>Next after</th><th>Message</th></tr></thead><tbody>
${attempts.map((a) => html`<tr class="attempt"><td>${str(a.at)}</td><td class="num">${str(a.attempt)}</td><td>${str(a.kind)}</td><td class="status">${str(a.status)}</td><td>${str(a.class)}</td><td class="delay">${a.delayMs === undefined || a.delayMs === null ? '–' : `${(Number(a.delayMs) / 1000).toFixed(1)} s`}</td><td class="reason">${str(a.message)}</td></tr>`)}</tbody></table>`
		: html`<p class="muted">No attempts recorded (parked by Dead Letter Park, or by an older version).</p>`;
	const steps = Array.isArray(r.steps) ? (r.steps as ItemStep[]) : [];
	const compensationOf = (s: ItemStep) =>
		s.compensation?.kind === 'request'
			? html`<code>${s.compensation.method} ${s.compensation.url}</code>${s.compensation.body ? html` <code>${s.compensation.body}</code>` : ''}`
			: s.compensation?.kind === 'manual'
				? html`<label class="manual"><input type="checkbox"> ${s.compensation.plan}</label>`
				: html`<span class="muted">none declared</span>`;
	const stepTable = steps.length
		? html`<table class="steps"><thead><tr><th>Step</th><th>Key</th><th>Done</th><th>HTTP</th><th>Saved response</th><th>Compensation</th></tr></thead><tbody>
${steps.map((s) => html`<tr class="step"><td>${s.step ?? ''}</td><td><code>${s.key}</code></td><td>${s.completedAt ?? ''}</td><td>${str(s.responseStatus)}</td><td class="reason">${(s.response ?? '').slice(0, 300)}</td><td class="compensation">${compensationOf(s)}</td></tr>`)}</tbody></table>
${open && steps.some((s) => s.compensation?.kind === 'request') ? html`<div class="actions">${form('compensate', 'Compensate (newest step first)', false, 'danger')}</div>` : ''}`
		: html`<p class="muted">No earlier steps of this item are recorded.</p>`;
	const content = html`<p><a href="${query({ view: 'list' })}">← Dead letters</a></p>
<h1>Dead letter ${id} ${statusBadge(r.status)}</h1>
<dl>
${field('Workflow', `${str(r.workflow_name) || str(r.workflow_id)} (${str(r.workflow_id)})`)}
${field('Step', r.step)}
${field('Reason', `${str(r.error_class)}${r.error_status ? ` (HTTP ${str(r.error_status)})` : ''}`)}
<dt>Error</dt><dd class="error-message">${str(r.error_message) || '–'}</dd>
${field('What already happened', r.already_happened)}
${field('Impact', r.impact)}
${field('Owner', r.owner)}
${field('Integration', r.integration)}
<dt>Idempotency key</dt><dd><code class="key">${str(r.idempotency_key) || '–'}</code></dd>
<dt>Run</dt><dd>${runLink ? html`<a class="run-link" href="${/^https?:\/\//i.test(runLink) ? runLink : '#'}" target="_blank" rel="noopener noreferrer">${runLink}</a>` : '–'}</dd>
${field('Attempts', `${str(r.attempts)} (failed ${str(r.failure_count)} time${Number(r.failure_count) === 1 ? '' : 's'})`)}
${field('Parked', `${duration(ageOf(r.parked_at))} ago (${new Date(r.parked_at as string).toISOString()})`)}
<dt>Workflow version</dt><dd><code class="source-version">${str(r.source_version) || '–'}</code></dd>
</dl>
${changed ? html`<p class="flash error workflow-changed">The workflow changed since this item was parked: a later failure at this step saw version <code>${changed.sourceVersion}</code> (${new Date(changed.seenAt).toISOString()}). Check that a replay still does what this item needs.</p>` : ''}
<h2>Attempts</h2>${attemptTable}
<h2>Steps already taken</h2>${stepTable}
<h2>Payload</h2><pre class="payload">${payload}</pre>
${open ? html`<h2>Actions</h2><div class="actions">${form('replay', 'Replay', false)}${form('being_fixed', 'Mark being fixed', false, 'quiet')}${form('resolve', 'Resolve', true, 'quiet')}${form('abandon', 'Abandon', true, 'danger')}</div>` : html`<p class="muted">Closed: no actions.</p>`}
<h2>History</h2>${history}`;
	return { html: layout(context, `Dead letter ${id}`, 'list', content) };
}

async function controlsPage(context: PageContext): Promise<Page> {
	const [pauses, heartbeats, held] = await Promise.all([
		listPauses(context.store).then((list) => maskValue(list)),
		listHeartbeats(context.store).then((list) => maskValue(list)),
		heldByIntegration(context.store),
	]);
	const heldBy = (name: string) => held.find((h) => h.integration === name)?.held ?? 0;
	const pauseRows = pauses.map(
		(
			p,
		) => html`<tr class="pause" data-name="${p.name}"><td>${p.scope}</td><td>${p.name}</td><td>${p.paused ? html`<b class="state-down">paused</b>` : html`<span class="state-up">running</span>`}</td><td>${p.changedBy}</td><td>${p.reason ?? ''}</td><td>${p.changedAt}</td><td class="num">${p.scope === 'integration' ? heldBy(p.name) : ''}</td>
<td>${p.paused ? html`<form method="post" action="${query({ view: 'controls' })}">${hidden('action', 'resume')}${hidden('token', context.token)}${hidden('scope', p.scope)}${hidden('name', p.name)}<input name="note" placeholder="why (optional)"> <button type="submit">Resume</button></form>` : ''}</td></tr>`,
	);
	const beatRows = heartbeats.map(
		(h) =>
			html`<tr class="heartbeat" data-name="${h.name}"><td>${h.name}</td><td class="state-${h.state}">${h.state}</td><td>${h.lastBeatAt} (${duration(ageOf(h.lastBeatAt))} ago)</td><td>${h.state === 'invalid' ? html`<span class="problem">${h.problem ?? ''}</span>` : h.dueAt}</td><td>${h.cron ?? (h.periodSeconds ? `every ${duration(h.periodSeconds)}` : '')}</td><td>${duration(h.graceSeconds)}</td></tr>`,
	);
	const content = html`<h1>Pauses</h1>
<form method="post" action="${query({ view: 'controls' })}" class="filters pause-form">${hidden('action', 'pause')}${hidden('token', context.token)}
<label>Scope <select name="scope"><option value="integration">integration</option><option value="workflow">workflow</option></select></label>
<label>Name <input name="name" required placeholder="e.g. crm"></label>
<label>Reason <input name="note" required placeholder="e.g. supplier outage, ticket 4711" size="36"></label>
<button type="submit" class="danger">Pause</button></form>
${pauses.length ? html`<table class="pauses"><thead><tr><th>Scope</th><th>Name</th><th>State</th><th>By</th><th>Why</th><th>Since</th><th class="num">Held items</th><th></th></tr></thead><tbody>${pauseRows}</tbody></table>` : html`<p class="muted">Nothing was ever paused.</p>`}
<h1>Heartbeats</h1>
${heartbeats.length ? html`<table class="heartbeats"><thead><tr><th>Name</th><th>State</th><th>Last beat</th><th>Due</th><th>Schedule</th><th>Grace</th></tr></thead><tbody>${beatRows}</tbody></table>` : html`<p class="muted">No heartbeats recorded yet.</p>`}`;
	return { html: layout(context, 'Pauses & heartbeats', 'controls', content) };
}

async function statsPage(context: PageContext): Promise<Page> {
	const days = context.options.days ?? 30;
	const stats = await deadLetterStats(context.store, { days, topReasons: 10 });
	const total = stats.parkedPerDay.reduce((sum, d) => sum + d.parked, 0);
	const group = (title: string, rows: Array<[string, number]>) =>
		html`<h2>${title}</h2>${rows.length ? html`<table><tbody>${rows.map(([k, n]) => html`<tr><td>${k}</td><td class="num">${n}</td></tr>`)}</tbody></table>` : html`<p class="muted">None.</p>`}`;
	const content = html`<h1>Stats</h1>
<div class="chips"><span class="chip">open <b>${stats.openCount}</b></span><span class="chip">parked in ${days} days <b class="parked-total">${total}</b></span><span class="chip">oldest waiting <b>${duration(stats.oldestWaitSeconds)}</b></span><span class="chip">median wait <b>${duration(stats.medianWaitSeconds)}</b></span><span class="chip">mean time to close <b>${duration(stats.averageResolutionSeconds)}</b></span></div>
<h2>Parked per day</h2>${parkedPerDayChart(stats.parkedPerDay, days)}
<h2>Top reasons (${days} days)</h2>${stats.topReasons.length ? html`<table class="top-reasons"><thead><tr><th>Reason</th><th class="num">Parked</th></tr></thead><tbody>${stats.topReasons.map((r) => html`<tr><td>${r.reason}</td><td class="num">${r.count}</td></tr>`)}</tbody></table>` : html`<p class="muted">Nothing parked.</p>`}
${group(
	'Open by workflow',
	stats.openByWorkflow.map((r): [string, number] => [r.workflow_id, r.open]),
)}
${group(
	'Open by step',
	stats.openByStep.map((r): [string, number] => [r.step, r.open]),
)}
${group(
	'Open by owner',
	stats.openByOwner.map((r): [string, number] => [r.owner, r.open]),
)}`;
	return { html: layout(context, 'Stats', 'stats', content) };
}
