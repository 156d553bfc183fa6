/**
 * The SQL of the operator console and its metrics, one named builder per statement. Every value
 * is bound; the only identifier spliced in is the validated, quoted schema name.
 */
export * from './metrics';
export * from './secret';
