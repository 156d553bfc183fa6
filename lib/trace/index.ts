export * from './trace';
