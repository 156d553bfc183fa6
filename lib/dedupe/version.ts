/**
 * Entity versions compare as numbers: a number or numeric string as it is, a date (ISO string
 * or Date) as epoch milliseconds. Anything else cannot be ordered and is refused.
 */
export function toVersionNumber(value: unknown): number | undefined {
	if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
	if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
	if (typeof value === 'string') {
		const text = value.trim();
		if (text === '') return undefined;
		if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
		if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
			const time = Date.parse(text);
			return Number.isNaN(time) ? undefined : time;
		}
	}
	return undefined;
}
