export * from './park';
export * from './statuses';
export * from './sourceVersion';
