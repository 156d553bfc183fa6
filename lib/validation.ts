import { ConfigurationError } from './errors';

/**
 * Numeric settings checked before anything is stored or sent, with a message that names the
 * setting and the allowed range, so a typo is a clear error instead of a raw database one.
 */
export function checkedNumber(
	label: string,
	value: unknown,
	range: { min: number; max: number; integer?: boolean },
): number {
	const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
	const whole = range.integer ? 'a whole number' : 'a number';
	if (
		typeof number !== 'number' ||
		!Number.isFinite(number) ||
		(range.integer && !Number.isInteger(number)) ||
		number < range.min ||
		number > range.max
	) {
		throw new ConfigurationError(
			`${label} must be ${whole} from ${range.min} to ${range.max} (got ${JSON.stringify(value) ?? String(value)})`,
			`Set ${label} to ${whole} between ${range.min} and ${range.max}.`,
		);
	}
	return number;
}
