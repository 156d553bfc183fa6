/**
 * The SQL of the dead-letter store, one named builder per statement, in a file per job. Values
 * are bound; the only identifier spliced in is the validated, quoted schema name.
 */
export * from './park';
export * from './read';
export * from './status';
export * from './purge';
export * from './stats';
export * from './alertDue';
