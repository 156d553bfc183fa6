/**
 * The step part of an open letter's identity (the unique index `dead_letters_open_identity`, and
 * the order every statement locks letters in, so that none deadlocks with another): an item's own
 * letter (an event's, `key:event:…`) is one per item whatever step it failed at, since the item
 * is what is replayed; any other letter (a write's, an execution's) is one per step. The
 * expression is the index's, as ON CONFLICT must name it.
 */
const OPEN_IDENTITY_STEP = `(CASE WHEN item_key LIKE 'key:event:%' THEN ''::text ELSE step END)`;

/** An open letter's identity, as the unique index keys it. */
export const OPEN_IDENTITY = `workflow_id, ${OPEN_IDENTITY_STEP}, item_key`;

/** The order letters are locked in: their open identity, then their ID. */
export const LOCK_ORDER = `${OPEN_IDENTITY}, id`;
