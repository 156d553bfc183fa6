export * from './park';
export * from './statuses';
