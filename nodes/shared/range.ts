import type { Range } from '../../lib';

/** A numeric parameter's editor limits, from the same range the engine checks. */
export const range = (limit: Range) => ({
	minValue: limit.min,
	maxValue: limit.max,
	...(limit.integer ? { numberPrecision: 0 } : {}),
});
