/**
 * The SQL of pauses and heartbeats, one named builder per statement. Every value is bound; the
 * only identifier spliced in is the validated, quoted schema name.
 */
export * from './heartbeats';
export * from './pauses';
