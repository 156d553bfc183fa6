/**
 * HTML for the operator console, escaped by construction: every value interpolated into the
 * `html` template is escaped unless it is itself a fragment built by `html` (or `raw`, for
 * markup the console writes itself). A payload carrying `<script>` renders as text.
 */
export class Html {
	constructor(readonly value: string) {}
	toString(): string {
		return this.value;
	}
}

const ESCAPES: Record<string, string> = {
	'&': '&amp;',
	'<': '&lt;',
	'>': '&gt;',
	'"': '&quot;',
	"'": '&#39;',
};

export function escapeHtml(value: unknown): string {
	if (value === null || value === undefined) return '';
	return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

type Part = Html | string | number | boolean | null | undefined | Date | Part[];

function render(part: Part): string {
	if (part instanceof Html) return part.value;
	if (Array.isArray(part)) return part.map(render).join('');
	if (part === null || part === undefined || part === false) return '';
	if (part instanceof Date) return escapeHtml(part.toISOString());
	return escapeHtml(part);
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
	let out = strings[0];
	values.forEach((value, i) => {
		out += render(value) + strings[i + 1];
	});
	return new Html(out);
}

/** Markup the console wrote itself (never user data). */
export const raw = (markup: string): Html => new Html(markup);

/** A query string from parameters, empty values left out. */
export function query(params: Record<string, string | number | undefined | null>): string {
	const search = new URLSearchParams();
	for (const [key, value] of Object.entries(params))
		if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
	const text = search.toString();
	return text ? `?${text}` : '?';
}

/** "3 h 12 min" from seconds: how long an item has waited, as an operator reads it. */
export function duration(seconds: number | null | undefined): string {
	if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
	const s = Math.max(0, Math.round(seconds));
	if (s < 60) return `${s} s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m} min`;
	const h = Math.floor(m / 60);
	if (h < 48) return `${h} h ${m % 60} min`;
	return `${Math.floor(h / 24)} d ${h % 24} h`;
}
