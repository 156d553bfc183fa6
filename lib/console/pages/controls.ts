import { listHeartbeats, listPauses } from '../../control';
import { drillEvents, listDrills, MAX_DRILL_MINUTES } from '../../drill';
import { heldByIntegration } from '../../deadletter';
import { maskValue } from '../../masking';
import { duration, html, query } from '../html';
import { ageOf, hidden, layout } from '../layout';
import { controlRefusal, teamsOf } from '../permissions';
import type { Page, PageContext } from '../types';

/** Pauses (with their held items), heartbeats and fire drills, and the forms to change them. */
export async function controlsPage(context: PageContext): Promise<Page> {
	const [pauses, heartbeats, held, drills, trail] = await Promise.all([
		listPauses(context.store).then((list) => maskValue(list)),
		listHeartbeats(context.store).then((list) => maskValue(list)),
		heldByIntegration(context.store),
		listDrills(context.store),
		drillEvents(context.store, undefined, 20),
	]);
	// An operator in no team may look but not pause or resume: no forms, and the reason instead.
	const readOnly = context.operator
		? controlRefusal(teamsOf(context.options), context.operator)
		: undefined;
	const heldBy = (name: string) => held.find((h) => h.integration === name)?.held ?? 0;
	const pauseRows = pauses.map(
		(
			p,
		) => html`<tr class="pause" data-name="${p.name}"><td>${p.scope}</td><td>${p.name}</td><td>${p.paused ? html`<b class="state-down">paused</b>` : html`<span class="state-up">running</span>`}</td><td>${p.changedBy}</td><td>${p.reason ?? ''}</td><td>${p.changedAt}</td><td class="num">${p.scope === 'integration' ? heldBy(p.name) : ''}</td>
<td>${p.paused && !readOnly ? html`<form method="post" action="${query({ view: 'controls' })}">${hidden('action', 'resume')}${hidden('token', context.token)}${hidden('scope', p.scope)}${hidden('name', p.name)}<input name="note" placeholder="why (optional)"> <button type="submit">Resume</button></form>` : ''}</td></tr>`,
	);
	const beatRows = heartbeats.map(
		(h) =>
			html`<tr class="heartbeat" data-name="${h.name}"><td>${h.name}</td><td class="state-${h.state}">${h.state}</td><td>${h.lastBeatAt} (${duration(ageOf(h.lastBeatAt))} ago)</td><td>${h.state === 'invalid' ? html`<span class="problem">${h.problem ?? ''}</span>` : h.dueAt}</td><td>${h.cron ?? (h.periodSeconds ? `every ${duration(h.periodSeconds)}` : '')}</td><td>${duration(h.graceSeconds)}</td></tr>`,
	);
	const pauseForm = readOnly
		? html`<p class="muted read-only">Read-only: ${readOnly}.</p>`
		: html`<form method="post" action="${query({ view: 'controls' })}" class="filters pause-form">${hidden('action', 'pause')}${hidden('token', context.token)}
<label>Scope <select name="scope"><option value="integration">integration</option><option value="workflow">workflow</option></select></label>
<label>Name <input name="name" required placeholder="e.g. crm"></label>
<label>Reason <input name="note" required placeholder="e.g. supplier outage, ticket 4711" size="36"></label>
<button type="submit" class="danger">Pause</button></form>`;
	const drillRows = drills.map(
		(d) =>
			html`<tr class="drill" data-name="${d.integration}"><td>${d.integration}</td><td>${d.active ? html`<b class="state-down">on</b>` : html`<span class="state-up">off</span>`}</td><td>${d.startedBy}</td><td>${d.reason ?? ''}</td><td>${d.startedAt}</td><td>${d.expiresAt}</td><td>${d.timeoutArmed ? 'armed' : d.firedKey ? `fired on ${d.firedKey}` : ''}</td>
<td>${d.active && !readOnly ? html`<form method="post" action="${query({ view: 'controls' })}">${hidden('action', 'drill_stop')}${hidden('token', context.token)}${hidden('name', d.integration)}<button type="submit">Stop drill</button></form>` : ''}</td></tr>`,
	);
	const trailRows = trail.map(
		(e) =>
			html`<tr class="drill-event"><td>${e.at}</td><td>${e.integration}</td><td>${e.action}</td><td>${e.actor}</td><td>${e.reason ?? ''}</td></tr>`,
	);
	const drillForm = readOnly
		? ''
		: html`<form method="post" action="${query({ view: 'controls' })}" class="filters drill-form">${hidden('action', 'drill_start')}${hidden('token', context.token)}
<label>Integration <input name="name" required placeholder="e.g. crm"></label>
<label>Minutes <input name="minutes" type="number" min="1" max="${MAX_DRILL_MINUTES}" value="30" required></label>
<label>Reason <input name="note" placeholder="e.g. pre-launch drill of lead routing" size="36"></label>
<button type="submit" class="danger">Start fire drill</button></form>`;
	const content = html`<h1>Pauses</h1>
${pauseForm}
${pauses.length ? html`<table class="pauses"><thead><tr><th>Scope</th><th>Name</th><th>State</th><th>By</th><th>Why</th><th>Since</th><th class="num">Held items</th><th></th></tr></thead><tbody>${pauseRows}</tbody></table>` : html`<p class="muted">Nothing was ever paused.</p>`}
<h1>Heartbeats</h1>
${heartbeats.length ? html`<table class="heartbeats"><thead><tr><th>Name</th><th>State</th><th>Last beat</th><th>Due</th><th>Schedule</th><th>Grace</th></tr></thead><tbody>${beatRows}</tbody></table>` : html`<p class="muted">No heartbeats recorded yet.</p>`}
<h1>Fire drill</h1>
<p class="muted">While an integration's drill is on, the Fire Drill operation may force a timeout after commit on its next write (the target's answer is discarded, so the write must recover by its key); its nodes show a warning. A drill sends real requests: point the workflow at a test target. It ends by itself after at most ${MAX_DRILL_MINUTES} minutes; other integrations are untouched.</p>
${drillForm}
${drills.length ? html`<table class="drills"><thead><tr><th>Integration</th><th>Drill</th><th>By</th><th>Why</th><th>Started</th><th>Ends</th><th>Forced timeout</th><th></th></tr></thead><tbody>${drillRows}</tbody></table>` : html`<p class="muted">No fire drill in the last day.</p>`}
${trail.length ? html`<h2>Drill trail</h2><table class="drill-trail"><thead><tr><th>At</th><th>Integration</th><th>What</th><th>Who</th><th>Why</th></tr></thead><tbody>${trailRows}</tbody></table>` : ''}`;
	return { html: layout(context, 'Pauses & heartbeats', 'controls', content) };
}
