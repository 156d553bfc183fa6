/**
 * Entity versions, compared exactly: a number, a numeric string of any length, or a date (an ISO
 * string keeps its microseconds; a Date its milliseconds) as epoch milliseconds with a decimal
 * fraction. They travel as decimal text and are stored as Postgres numeric, so a newer update is
 * never judged equal to an older one through floating-point rounding (integers past 2^53, or
 * two timestamps within one millisecond).
 */
const DECIMAL = /^[+-]?\d+(\.\d+)?$/;
const ISO_DATE =
	/^(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/;

/** A decimal string without a plus sign, leading zeros or trailing fraction zeros. */
function normalised(text: string): string {
	const negative = text.startsWith('-');
	const [int, frac = ''] = text.replace(/^[+-]/, '').split('.');
	const whole = int.replace(/^0+(?=\d)/, '');
	const fraction = frac.replace(/0+$/, '');
	const body = fraction ? `${whole}.${fraction}` : whole;
	return negative && body !== '0' ? `-${body}` : body;
}

function fromNumber(value: number): string | undefined {
	if (!Number.isFinite(value)) return undefined;
	if (Number.isInteger(value)) return BigInt(value).toString();
	const text = String(value);
	return normalised(/e/i.test(text) ? value.toFixed(20) : text);
}

function fromIsoDate(text: string): string | undefined {
	const match = ISO_DATE.exec(text);
	if (!match) return undefined;
	const [, base, fraction = '', zone = ''] = match;
	const seconds = Date.parse(`${base}${zone}`);
	if (Number.isNaN(seconds) || seconds < 0) return undefined;
	const padded = fraction.padEnd(3, '0');
	const millis = BigInt(seconds) + BigInt(padded.slice(0, 3));
	const rest = padded.slice(3).replace(/0+$/, '');
	return rest ? `${millis}.${rest}` : millis.toString();
}

/** The version as exact decimal text, or undefined when it cannot be ordered. */
export function toVersion(value: unknown): string | undefined {
	if (typeof value === 'number') return fromNumber(value);
	if (typeof value === 'bigint') return value.toString();
	if (value instanceof Date)
		return Number.isNaN(value.getTime()) ? undefined : fromNumber(value.getTime());
	if (typeof value === 'string') {
		const text = value.trim();
		if (DECIMAL.test(text)) return normalised(text);
		if (/^\d{4}-\d{2}-\d{2}/.test(text)) return fromIsoDate(text);
	}
	return undefined;
}

/** Orders two versions from toVersion: negative when a is older, 0 when equal, positive when newer. */
export function compareVersions(a: string, b: string): number {
	const sign = (text: string) => (text.startsWith('-') ? -1 : 1);
	if (sign(a) !== sign(b)) return sign(a);
	const [ai, af = ''] = a.replace('-', '').split('.');
	const [bi, bf = ''] = b.replace('-', '').split('.');
	let order = ai.length - bi.length || (ai < bi ? -1 : ai > bi ? 1 : 0);
	if (order === 0) {
		const width = Math.max(af.length, bf.length);
		const x = af.padEnd(width, '0');
		const y = bf.padEnd(width, '0');
		order = x < y ? -1 : x > y ? 1 : 0;
	}
	return sign(a) * order;
}
