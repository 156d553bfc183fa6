export { type SqlStatement, StatementFailedError } from './businessStatements';
export * from './config';
export { MessageConflictError } from './enqueue';
export * from './fail';
export * from './failPolicy';
export * from './messages';
export * from './purge';
export {
	completeMessages,
	type FailRequest,
	type MessageSettleRequest,
	type MessageSettleResult,
} from './settle';
export * from './statuses';
export * from './take';
export * from './write';
