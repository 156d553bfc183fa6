/**
 * The SQL the store runs on a bare connection, before or without a Store: the credential's test
 * and the schema dump. Every value is bound.
 */
export * from './diagnose';
export * from './schemaDump';
