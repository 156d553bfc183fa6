export * from './compose';
export * from './issues';
export * from './routing';
export { normalizedMessage } from './cause';
