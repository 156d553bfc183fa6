export * from './park';
export * from './read';
export * from './status';
export * from './purge';
export * from './stats';
export * from './statuses';
export * from './sourceVersion';
export * from './summary';
