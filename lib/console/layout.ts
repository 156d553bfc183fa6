import { createHash } from 'node:crypto';
import { escapeHtml, type Html, html, query } from './html';
import type { PageContext } from './types';

/**
 * The frame of every page: navigation, the flash message, the one stylesheet (allowed by its hash
 * in the Content-Security-Policy) and the headers that forbid framing; small pieces pages share.
 */
export const STATUS_LABELS: Record<string, string> = {
	new: 'new',
	being_fixed: 'being fixed',
	replay_requested: 'replay requested',
	replayed: 'replayed',
	resolved: 'resolved',
	abandoned: 'abandoned',
	held: 'held',
	compensated: 'compensated',
};

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
export const policyMeta = html`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`;
export const SECURITY_HEADERS: Record<string, string> = {
	'x-frame-options': 'DENY',
	'x-content-type-options': 'nosniff',
	'referrer-policy': 'same-origin',
	'cache-control': 'no-store',
};

export function layout(context: PageContext, title: string, view: string, content: Html): Html {
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

export const hidden = (name: string, value: string) =>
	html`<input type="hidden" name="${name}" value="${value}">`;
export const statusBadge = (status: unknown) =>
	html`<span class="status ${String(status)}">${STATUS_LABELS[String(status)] ?? String(status)}</span>`;
export const ageOf = (at: unknown): number | null =>
	at ? (Date.now() - new Date(at as string).getTime()) / 1000 : null;
export const truncate = (text: unknown, max = 120): string => {
	const s = text === null || text === undefined ? '' : String(text);
	return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};
