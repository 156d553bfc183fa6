export * from './claims';
export * from './eventIds';
export * from './outcomes';
export * from './validate';
export * from './version';
