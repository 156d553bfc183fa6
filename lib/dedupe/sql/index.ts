/**
 * The SQL of Event Dedupe, one named builder per statement. Every value is bound; the only
 * identifier spliced in is the validated, quoted schema name.
 */
export * from './accounting';
export * from './claims';
export * from './inbox';
export * from './withWork';
