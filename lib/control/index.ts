export * from './cron';
export * from './heartbeats';
export * from './pauses';
export * from './housekeeping';
