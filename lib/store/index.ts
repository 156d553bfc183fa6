export * from './config';
export * from './diagnose';
export * from './identifiers';
export * from './migrations';
export * from './sqlstate';
export * from './store';
export * from './storable';
export * from './slices';
