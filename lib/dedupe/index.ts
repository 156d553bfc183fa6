export * from './claims';
export * from './outcomes';
export * from './validate';
export * from './version';
