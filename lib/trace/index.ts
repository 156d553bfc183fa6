export * from './trace';
export * from './types';
