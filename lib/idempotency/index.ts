export * from './keys';
export * from './policy';
export * from './writer';
