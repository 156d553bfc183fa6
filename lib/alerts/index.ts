export * from './compose';
