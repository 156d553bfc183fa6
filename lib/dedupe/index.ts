export * from './claims';
export * from './eventIds';
export * from './outcomes';
export * from './validate';
export * from './version';
export * from './inbox';
export * from './keeper';
export * from './withWork';
