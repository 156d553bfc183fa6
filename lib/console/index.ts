export * from './console';
export * from './html';
export * from './metrics';
export * from './secret';
