export * from './errors';
export * from './store';
export * from './dedupe';
export * from './deadletter';
export * from './control';
export * from './idempotency';
export * from './console';
export * from './outbox';
