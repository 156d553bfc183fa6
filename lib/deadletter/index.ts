export * from './mask';
export * from './park';
export * from './statuses';
