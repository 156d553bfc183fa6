export * from './breaker';
export * from './keys';
export * from './policy';
export * from './responses';
export * from './types';
export * from './writer';
export * from './recovery';
export * from './purge';
