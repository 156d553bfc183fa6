import { parkedOrThrow, parkItems } from '../../lib/deadletter';

/** Parks a batch a test expects parked whole: the records in order, or the first refusal thrown. */
export async function parkAll(...args: Parameters<typeof parkItems>) {
	return parkedOrThrow(await parkItems(...args));
}
