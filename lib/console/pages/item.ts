import { getDeadLetters, type ItemStep, newerSourceVersion } from '../../deadletter';
import { OPEN_STATUSES } from '../../deadletter/statuses';
import { maskValue } from '../../masking';
import { duration, html, query } from '../html';
import { ageOf, hidden, layout, statusBadge } from '../layout';
import { refusalFor, teamsOf } from '../permissions';
import type { Page, PageContext } from '../types';
import { str } from '../values';

/** One dead letter: what failed and why, its attempts, the steps already taken, its actions and history. */
export async function itemPage(id: string, context: PageContext): Promise<Page> {
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
	const readOnly = context.operator
		? refusalFor(teamsOf(context.options), context.operator, record.owner)
		: undefined;
	const open = OPEN_STATUSES.includes(r.status) && !readOnly;
	const history = html`<table class="history"><thead><tr><th>When</th><th>Who</th><th>From</th><th>To</th><th>Why</th></tr></thead><tbody>
${r.history.map((e) => html`<tr><td>${e.at}</td><td class="actor">${e.actor}</td><td>${e.fromStatus ?? ''}</td><td>${e.toStatus}</td><td class="reason">${e.reason ?? ''}</td></tr>`)}</tbody></table>`;
	const attempts = Array.isArray(r.attempt_history)
		? (r.attempt_history as Array<Record<string, unknown>>)
		: [];
	const attemptTable = attempts.length
		? html`<table class="attempts"><thead><tr><th>When</th><th>Attempt</th><th>Kind</th><th>HTTP</th><th>Class</th><th>Next after</th><th>Message</th></tr></thead><tbody>
${attempts.map((a) => html`<tr class="attempt"><td>${str(a.at)}</td><td class="num">${str(a.attempt)}</td><td>${str(a.kind)}</td><td class="status">${str(a.status)}</td><td>${str(a.class)}</td><td class="delay">${a.delayMs === undefined || a.delayMs === null ? '–' : `${(Number(a.delayMs) / 1000).toFixed(1)} s`}</td><td class="reason">${str(a.message)}</td></tr>`)}</tbody></table>`
		: html`<p class="muted">No attempts recorded (parked by Dead Letter Park, or written without an attempt history).</p>`;
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
${open ? html`<h2>Actions</h2><div class="actions">${form('replay', 'Replay', false)}${form('being_fixed', 'Mark being fixed', false, 'quiet')}${form('resolve', 'Resolve', true, 'quiet')}${form('abandon', 'Abandon', true, 'danger')}</div>` : readOnly && OPEN_STATUSES.includes(r.status) ? html`<h2>Actions</h2><p class="muted read-only">Read-only: ${readOnly}.${r.owner ? ` Team ${str(r.owner)} can replay, resolve or abandon it.` : ''}</p>` : html`<p class="muted">Closed: no actions.</p>`}
<h2>History</h2>${history}`;
	return { html: layout(context, `Dead letter ${id}`, 'list', content) };
}
