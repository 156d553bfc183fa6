import { html, type Html } from './html';

/**
 * Parked-per-day as an inline SVG bar chart: one bar per UTC day of the window (days without
 * parks are drawn as empty slots, so gaps read as quiet days), the highest count on the axis.
 */
export function parkedPerDayChart(
	perDay: Array<{ day: string; parked: number }>,
	days: number,
	today: Date = new Date(),
): Html {
	const counts = new Map(perDay.map((d) => [d.day, d.parked]));
	const slots: Array<{ day: string; parked: number }> = [];
	for (let i = days - 1; i >= 0; i--) {
		const day = new Date(
			Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i),
		)
			.toISOString()
			.slice(0, 10);
		slots.push({ day, parked: counts.get(day) ?? 0 });
	}
	const width = 640;
	const height = 160;
	const pad = { left: 36, bottom: 22, top: 10 };
	const max = Math.max(1, ...slots.map((s) => s.parked));
	const slot = (width - pad.left) / slots.length;
	const plot = height - pad.bottom - pad.top;
	const bars = slots.map((s, i) => {
		const h = Math.round((s.parked / max) * plot);
		const x = pad.left + i * slot + 1;
		const y = pad.top + plot - h;
		return html`<rect class="bar" x="${x.toFixed(1)}" y="${y}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${h}" data-day="${s.day}" data-parked="${s.parked}"><title>${s.day}: ${s.parked} parked</title></rect>`;
	});
	const first = slots[0]?.day ?? '';
	const last = slots[slots.length - 1]?.day ?? '';
	return html`<svg class="chart" role="img" aria-label="Items parked per day, last ${days} days" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">
<line x1="${pad.left}" y1="${pad.top + plot}" x2="${width}" y2="${pad.top + plot}" class="axis"/>
<text x="${pad.left - 6}" y="${pad.top + 8}" text-anchor="end" class="label">${max}</text>
<text x="${pad.left - 6}" y="${pad.top + plot}" text-anchor="end" class="label">0</text>
${bars}
<text x="${pad.left}" y="${height - 6}" class="label">${first}</text>
<text x="${width}" y="${height - 6}" text-anchor="end" class="label">${last}</text>
</svg>`;
}
