import { deadLetterStats } from '../../deadletter';
import { parkedPerDayChart } from '../chart';
import { duration, html } from '../html';
import { layout } from '../layout';
import type { Page, PageContext } from '../types';

/** Parks per day, top reasons, and what is open by workflow, step and owner. */
export async function statsPage(context: PageContext): Promise<Page> {
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
	stats.openByWorkflow.map((r): [string, number] => [
		r.workflowName ? `${r.workflowName} (${r.workflowId})` : r.workflowId,
		r.open,
	]),
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
