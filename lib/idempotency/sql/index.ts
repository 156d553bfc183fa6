/**
 * The SQL of the idempotency record, one named builder per statement, in a file per job: the
 * owner's statements (claim.ts), the settle (settle.ts), the records' ends and reads of
 * other records (records.ts), and the integration's breaker (breaker.ts). Every value is bound;
 * the only identifier spliced in is the validated, quoted schema name.
 *
 * Ownership is fenced: a claim or takeover gives its owner a generation, and every later
 * statement of that owner (attempt start, lease renewal, settle) is conditional on it, so an
 * owner that was superseded while it was slow changes nothing and learns so.
 */
export * from './claim';
export * from './settle';
export * from './records';
export * from './breaker';
