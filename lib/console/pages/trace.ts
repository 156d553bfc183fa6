import { ConfigurationError } from '../../errors';
import { maskText } from '../../masking';
import type { Store } from '../../store';
import {
	type ClaimEntry,
	type DeadLetterEntry,
	type TraceEntry,
	TraceEntryKind,
	traceItem,
	type TraceResult,
	TraceState,
	type WriteEntry,
} from '../../trace';
import { type Html, html, query } from '../html';

/**
 * The console's "Find an item" page: one search box, and the item's timeline (claims, write
 * steps, dead letters, oldest first) with links to the n8n executions and to each dead letter's
 * page. Everything shown is escaped by `html`; the values come masked from Trace.
 */
const STATE_LABELS: Record<TraceState, string> = {
	in_flight: 'in flight',
	done: 'done',
	failed: 'failed',
	crashed: 'crashed',
	unknown: 'outcome unknown',
	parked: 'parked',
	held: 'held',
	closed: 'closed',
};

const stateBadge = (state: TraceState | null) =>
	state
		? html`<span class="state state-${state}">${STATE_LABELS[state]}</span>`
		: html`<span class="state">not found</span>`;

/** Only http(s) links are followed; anything else is shown as text. */
const executionAnchor = (label: string, href: string | null, id: string | null) =>
	href && /^https?:\/\//i.test(href)
		? html`<a class="execution-link" href="${href}" target="_blank" rel="noopener noreferrer">${label} ${id ?? ''}</a>`
		: id
			? html`<span class="muted">${label} ${id}</span>`
			: '';

const when = (at: string | null) => (at ? at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '–');

function claimRow(e: ClaimEntry): Html {
	const recovered = e.originExecutionId && e.originExecutionId !== e.executionId;
	return html`<td>Claim by <b>${e.consumer}</b><br><code>${e.eventId}</code></td>
<td>status ${e.status}, lease until ${when(e.leaseUntil)}${e.completedAt ? html`, completed ${when(e.completedAt)}` : ''}${e.recoverAttempts ? html`<br>recovered ${e.recoverAttempts} time${e.recoverAttempts === 1 ? '' : 's'}` : ''}${e.itemKept === null ? '' : html`<br>${e.itemKept ? 'item kept in the inbox' : 'item over the inbox cap, not kept'}`}${e.lastError ? html`<br><span class="error-message">${e.lastError}</span>` : ''}</td>
<td>${executionAnchor('execution', e.executionLink, e.executionId)}${recovered ? html`<br>${executionAnchor('first run', e.originExecutionLink, e.originExecutionId)}` : ''}</td>`;
}

function writeRow(e: WriteEntry): Html {
	const attempts = e.history.length
		? html`<ol class="attempts">${e.history.map(
				(a) =>
					html`<li>${when(a.at)}: ${a.kind}${a.status ? html` ${a.status}` : ''}${a.class ? html` (${a.class})` : ''}${a.message ? html`: ${a.message}` : ''}</li>`,
			)}</ol>`
		: '';
	return html`<td>Write step <b>${e.step ?? '–'}</b> (${e.scope})<br><code>${e.key}</code></td>
<td>status ${e.status}, ${e.attempts} attempt${e.attempts === 1 ? '' : 's'}${e.response ? html`<br>saved response ${e.response.status}, ${e.response.bytes ? `${e.response.bytes} bytes${e.response.truncated ? ' (truncated)' : ''}` : 'no body'}` : ''}${e.lastError ? html`<br><span class="error-message">${e.lastError}</span>` : ''}${attempts}</td>
<td>${executionAnchor('execution', e.executionLink, e.executionId)}</td>`;
}

function deadLetterRow(e: DeadLetterEntry): Html {
	const history = html`<ol class="history">${e.history.map(
		(h) =>
			html`<li>${when(h.at)}: ${h.fromStatus ? html`${h.fromStatus} → ` : ''}${h.toStatus} by ${h.actor}${h.reason ? html`: ${h.reason}` : ''}</li>`,
	)}</ol>`;
	return html`<td><a class="dead-letter-link" href="${query({ view: 'item', id: e.id })}">Dead letter ${e.id}</a> at <b>${e.step}</b><br><code>${e.idempotencyKey ?? ''}</code></td>
<td>status ${e.status}, ${e.errorClass}${e.errorStatus ? html` (HTTP ${e.errorStatus})` : ''}${e.message ? html`<br><span class="error-message">${e.message}</span>` : ''}${history}</td>
<td>${executionAnchor('execution', e.executionLink, e.executionId)}</td>`;
}

function entryRow(e: TraceEntry): Html {
	const cells =
		e.kind === TraceEntryKind.claim
			? claimRow(e)
			: e.kind === TraceEntryKind.write
				? writeRow(e)
				: deadLetterRow(e);
	return html`<tr class="entry" data-kind="${e.kind}" data-state="${e.state}"><td>${when(e.at)}</td><td>${stateBadge(e.state)}</td>${cells}</tr>`;
}

function timeline(result: TraceResult): Html {
	if (result.entries.length === 0)
		return html`<p class="muted nothing">Nothing in the store carries "${result.query}": no claim, write key or dead letter (records past their retention are purged).</p>`;
	const how =
		result.match === 'exact'
			? 'records carrying it exactly, and those containing it where none did'
			: 'records containing it (no record carries it exactly)';
	return html`<p class="summary">Item <code>${result.query}</code> is ${stateBadge(result.state)}: ${result.entries.length} record${result.entries.length === 1 ? '' : 's'}, ${how}.${result.truncated ? html` <b class="truncated">More records matched; the newest ${result.limit} are shown.</b>` : ''}</p>
<table class="timeline"><thead><tr><th>When</th><th>State</th><th>Record</th><th>Details</th><th>Run</th></tr></thead><tbody>
${result.entries.map(entryRow)}</tbody></table>`;
}

/** The page's content for the search `q`: the box, and the timeline when something was asked. */
export async function traceContent(store: Store, q: string, baseUrl?: string): Promise<Html> {
	// The box shows the search masked, as the answer names it: a pasted log line may hold a credential.
	const form = html`<form method="get" class="filters trace-search"><input type="hidden" name="view" value="trace">
<label>Business ID <input name="q" value="${maskText(q)}" placeholder="e.g. INV-20931" size="40" autofocus></label>
<button type="submit">Find</button></form>`;
	// A search the store cannot run as typed (too long) says why on the page.
	const result = q
		? await traceItem(store, q, { baseUrl }).then(timeline, (error: unknown) => {
				if (!(error instanceof ConfigurationError)) throw error;
				return html`<p class="flash error">${error.message}. ${error.hint ?? ''}</p>`;
			})
		: '';
	return html`<h1>Where is an item?</h1>
<p class="muted">An event ID, an idempotency key or a part of one (at least 3 characters).</p>
${form}${result}`;
}
