import { listAudits, type SavedAudit } from '../../audit';
import { maskValue } from '../../masking';
import { workflowLink } from '../../runLink';
import { duration, type Html, html, query } from '../html';
import { ageOf, layout } from '../layout';
import type { Page, PageContext } from '../types';

/**
 * The last audit of the instance (Reliability Control > Audit): its score, the open findings by
 * rule, and each workflow's score, failed checklist lines and findings with a link into the
 * editor; one workflow's page adds its checklist, its accepted findings and its failure
 * inventory as a table.
 */
export async function auditPage(workflowId: string, context: PageContext): Promise<Page> {
	const audits = maskValue(await listAudits(context.store, workflowId || undefined));
	if (workflowId) {
		const [audit] = audits;
		if (!audit)
			return {
				notFound: true,
				html: layout(
					context,
					'Audit',
					'audit',
					html`<h1>Audit</h1><p class="flash error">No audit of workflow ${workflowId}: run Reliability Control &gt; Audit &gt; Generate over it.</p>`,
				),
			};
		return {
			html: layout(
				context,
				`Audit of ${audit.workflowName ?? workflowId}`,
				'audit',
				workflowContent(audit, context),
			),
		};
	}
	return { html: layout(context, 'Audit', 'audit', instanceContent(audits, context)) };
}

const editorLink = (audit: SavedAudit, context: PageContext): Html | string => {
	const base = (context.options.baseUrl ?? '').replace(/\/+$/, '');
	const link = /^https?:\/\//i.test(base) ? workflowLink(base, audit.workflowId) : undefined;
	return link
		? html`<a class="editor-link" href="${link}" target="_blank" rel="noopener noreferrer">open in the editor</a>`
		: '';
};

function instanceContent(audits: SavedAudit[], context: PageContext): Html {
	if (audits.length === 0)
		return html`<h1>Audit</h1><p class="muted">No audit yet. Run a workflow with n8n's n8n node (Workflow &gt; Get Many, Return All) and then Reliability Control &gt; Audit &gt; Generate.</p>`;
	const score = Math.round(audits.reduce((sum, a) => sum + a.score, 0) / audits.length);
	const byRule = new Map<string, { severity: string; n: number }>();
	for (const finding of audits.flatMap((a) => a.findings)) {
		const entry = byRule.get(finding.rule) ?? { severity: finding.severity, n: 0 };
		entry.n++;
		byRule.set(finding.rule, entry);
	}
	const rules = [...byRule.entries()].sort((a, b) => b[1].n - a[1].n || a[0].localeCompare(b[0]));
	const oldest = Math.max(...audits.map((a) => ageOf(a.auditedAt) ?? 0));
	const rows = audits.map(
		(a) =>
			html`<tr class="audited" data-id="${a.savedId}"><td><a href="${query({ view: 'audit', workflow: a.savedId })}">${a.workflowName ?? a.savedId}</a></td><td class="num score">${a.score}</td><td>${a.checklist
				.filter((l) => l.result === 'failed')
				.map((l) => l.id)
				.join(
					', ',
				)}</td><td class="num findings">${a.findings.length}</td><td class="num">${a.accepted.length}</td><td>${editorLink(a, context)}</td></tr>`,
	);
	return html`<h1>Audit</h1>
<div class="chips"><span class="chip">instance score <b class="instance-score">${score}</b></span><span class="chip">workflows <b>${audits.length}</b></span><span class="chip">open findings <b class="open-findings">${audits.reduce((n, a) => n + a.findings.length, 0)}</b></span><span class="chip">audited <b>${duration(oldest)}</b> ago</span></div>
<h2>Findings by rule</h2>${rules.length ? html`<table class="rules"><thead><tr><th>Rule</th><th>Severity</th><th class="num">Open</th></tr></thead><tbody>${rules.map(([rule, r]) => html`<tr class="rule" data-rule="${rule}"><td><code>${rule}</code></td><td>${r.severity}</td><td class="num">${r.n}</td></tr>`)}</tbody></table>` : html`<p class="muted">No open finding.</p>`}
<h2>Workflows</h2><table class="audits"><thead><tr><th>Workflow</th><th class="num">Score</th><th>Checklist lines failed</th><th class="num">Findings</th><th class="num">Accepted</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function workflowContent(audit: SavedAudit, context: PageContext): Html {
	const checklist = audit.checklist.map(
		(l) =>
			html`<tr class="line ${l.result}"><td>${l.check}</td><td>${l.result.replace('_', ' ')}</td><td>${l.node ?? ''}</td></tr>`,
	);
	const findings = audit.findings.map(
		(f) =>
			html`<tr class="finding" data-rule="${f.rule}"><td><code>${f.rule}</code></td><td>${f.severity}</td><td>${f.node ?? '(the workflow)'}</td><td>${f.why}</td><td>${f.fix}</td></tr>`,
	);
	const accepted = audit.accepted.map(
		(f) =>
			html`<tr class="accepted"><td><code>${f.rule}</code></td><td>${f.node ?? '(the workflow)'}</td><td>${f.reason}</td></tr>`,
	);
	const inventory = audit.inventory.map(
		(s) =>
			html`<tr class="step"><td>${s.step}</td><td>${s.kind}</td><td>${s.failures.map((f) => `${f.way.replace(/_/g, ' ')} (${f.class})`).join(', ')}</td><td>${s.handling}</td></tr>`,
	);
	return html`<p><a href="${query({ view: 'audit' })}">All workflows</a></p>
<h1>${audit.workflowName ?? audit.savedId}</h1>
<div class="chips"><span class="chip">score <b class="score">${audit.score}</b></span><span class="chip">open findings <b>${audit.findings.length}</b></span><span class="chip">audited <b>${duration(ageOf(audit.auditedAt))}</b> ago</span>${editorLink(audit, context) ? html`<span class="chip">${editorLink(audit, context)}</span>` : ''}</div>
<h2>Checklist</h2><table class="checklist"><tbody>${checklist}</tbody></table>
<h2>Findings</h2>${findings.length ? html`<table class="findings"><thead><tr><th>Rule</th><th>Severity</th><th>Node</th><th>Why it matters</th><th>Fix</th></tr></thead><tbody>${findings}</tbody></table>` : html`<p class="muted">No open finding.</p>`}
${accepted.length ? html`<h2>Accepted</h2><table class="accepted"><thead><tr><th>Rule</th><th>Node</th><th>Reason</th></tr></thead><tbody>${accepted}</tbody></table>` : ''}
<h2>Failure inventory</h2><table class="inventory"><thead><tr><th>Step</th><th>Kind</th><th>How it can fail</th><th>What the workflow does about it</th></tr></thead><tbody>${inventory}</tbody></table>`;
}
