export * from './config';
export * from './messages';
export * from './purge';
export * from './settle';
export * from './statuses';
export * from './take';
export * from './write';
