export * from './installWorkflows';
export type { WorkflowBody } from './body';
export type { ApiWorkflow, CredentialRef } from './plan';
export { installOrder, parseBundled } from './plan';
export type { SetupRecord } from './merge';
export { type SetupRecords, storeSetupRecords } from './records';
export { bundledWorkflowFiles } from './bundledWorkflowFiles';
