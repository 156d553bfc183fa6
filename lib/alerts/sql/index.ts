export * from './issues';
