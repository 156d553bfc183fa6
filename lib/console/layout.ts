import { createHash } from 'node:crypto';
import { escapeHtml, type Html, html, query } from './html';
import { styleSheet } from './styleSheet';
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

/** The one stylesheet, ./console.css (embedded into the bundle by the build). */
const STYLE = styleSheet();

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
		['issues', 'Issues'],
		['controls', 'Pauses & heartbeats'],
		['stats', 'Stats'],
		['trace', 'Find an item'],
		['audit', 'Audit'],
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
