import { openIssues } from '../../alerts';
import { maskValue } from '../../masking';
import { duration, html, query } from '../html';
import { ageOf, layout } from '../layout';
import type { Page, PageContext } from '../types';

/**
 * The open alert issues: items parked for the same cause, one row each, with their counts, where
 * their alerts went, the first and latest item, and a link to the issue's items, where a batch
 * replay replays them all once the cause is fixed.
 */
export async function issuesPage(context: PageContext): Promise<Page> {
	const issues = maskValue(await openIssues(context.store, { limit: 200 }));
	const rows = issues.map(
		(i) =>
			html`<tr class="issue" data-id="${String(i.id)}"><td><a href="${query({ view: 'list', issue: String(i.id) })}">#${String(i.id)}</a></td><td>${i.headline}</td><td>${[i.step, i.error_class].filter(Boolean).join(', ')}: ${i.message}</td><td>${i.route}</td><td>${i.owner}</td><td class="num items">${String(i.items)}</td><td class="num open">${String(i.open_items)}</td><td>${i.first_item ?? ''}</td><td>${i.last_item ?? ''}</td><td>${duration(ageOf(i.opened_at))}</td></tr>`,
	);
	const content = html`<h1>Issues</h1>
<p class="muted">Items that parked for the same cause are one issue: its first item alerted, later ones updated its count. It resolves, with a resolve alert, when none of its items is open any more.</p>
${rows.length ? html`<table class="issues"><thead><tr><th>#</th><th>What</th><th>Cause</th><th>Alerts to</th><th>Owner</th><th class="num">Items</th><th class="num">Open</th><th>First</th><th>Latest</th><th>Open for</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p class="muted">No open issues.</p>`}`;
	return { html: layout(context, 'Issues', 'issues', content) };
}
