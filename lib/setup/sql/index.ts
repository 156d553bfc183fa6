/**
 * The SQL of Setup, one named builder per statement. Every value is bound; the only identifier
 * spliced in is the validated, quoted schema name.
 */
export * from './records';
