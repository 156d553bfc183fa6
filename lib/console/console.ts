import { ConfigurationError, ReliabilityError } from '../errors';
import { inRange, LIMITS } from '../limits';
import { maskText } from '../masking';
import { storableText } from '../store/storable';
import type { Store } from '../store';
import { ActionRefusedError, doneMessage, runAction } from './actions';
import { operatorOf } from './auth';
import { checkedTeams } from './permissions';
import { filtersOf } from './filters';
import { html, query } from './html';
import { layout, policyMeta, SECURITY_HEADERS } from './layout';
import { auditPage } from './pages/audit';
import { controlsPage } from './pages/controls';
import { issuesPage } from './pages/issues';
import { itemPage } from './pages/item';
import { listPage } from './pages/list';
import { statsPage } from './pages/stats';
import { traceContent } from './pages/trace';
import { consoleSecret, formToken, formTokenValid } from './secret';
import type { ConsoleOptions, ConsoleRequest, ConsoleResponse, Page, PageContext } from './types';
import { objectOrEmpty, str } from './values';

export { CONTENT_SECURITY_POLICY } from './layout';
export { operatorOf } from './auth';
export type { ConsoleOptions, ConsoleRequest, ConsoleResponse } from './types';

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
		teams: checkedTeams(given.teams),
		batchLimit:
			given.batchLimit === undefined
				? undefined
				: inRange(given.batchLimit, { label: 'Batch limit', min: 1, max: 10_000, integer: true }),
	};
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
	// The console keeps no execution in n8n (its runs would hold the operator's sign-in), so a
	// store that cannot be read is said on the page, where the operator is, not in a saved run.
	let secret: Awaited<ReturnType<typeof consoleSecret>>;
	try {
		secret = await consoleSecret(store);
	} catch (error) {
		const hint = error instanceof ReliabilityError && error.hint ? ` ${error.hint}` : '';
		return {
			statusCode: 503,
			contentType: 'text/html; charset=utf-8',
			body: html`<!doctype html><meta charset="utf-8">${policyMeta}<title>Console unavailable</title><p>The console cannot read the reliability store: ${maskText(`${error instanceof Error ? error.message : String(error)}.${hint}`)}</p>`
				.value,
			headers: SECURITY_HEADERS,
			replayRequested: 0,
			operator,
			action: null,
			location: '',
		};
	}
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
				throw new ActionRefusedError(
					'Actions need a signed-in operator',
					'Sign in through the webhook authentication (Basic auth user name) or configure the operator header.',
				);
			if (!formTokenValid(secret, operator, str(body.token)))
				throw new ActionRefusedError(
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
			statusCode =
				error instanceof ActionRefusedError || error instanceof ReliabilityError ? 422 : 500;
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

/**
 * The page's query, to return to after an action, masked: a search box may hold a pasted log
 * line with a credential in it, and the link and Location header would echo it.
 */
function stringParams(q: Record<string, unknown>): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [key, value] of Object.entries(q))
		if (!['done', 'n', 'done_id'].includes(key)) out[key] = maskText(str(value));
	return out;
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
		case 'issues':
			return await issuesPage(context);
		case 'audit':
			return await auditPage(str(q.workflow), context);
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
