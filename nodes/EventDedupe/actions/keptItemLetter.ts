import { eventLetterKey, type FailedExecution, keptPayload, type ParkRequest } from '../../../lib';

/** An item the inbox kept for a claim. */
type KeptItem = FailedExecution['items'][number];

/** The impact of a letter about a kept item whose work did not finish, unless the node sets one. */
export const UNFINISHED_IMPACT = 'the event was received but its work did not finish';

/**
 * What a dead letter about an item the inbox kept says of the item, whoever parks it (the Error
 * handler, Recover): the event's letter key, so an event has one letter, its ID, and the item as
 * the inbox kept it, so Replay re-runs it.
 */
export const keptItemLetter = (
	item: KeptItem,
): Pick<ParkRequest, 'idempotencyKey' | 'businessId' | 'payload'> => ({
	idempotencyKey: eventLetterKey(item.consumer, item.eventId),
	businessId: item.eventId,
	payload: keptPayload(item),
});
