export * from './cron';
export * from './heartbeats';
export * from './pauses';
