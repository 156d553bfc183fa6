export * from './types';
export { AUDIT_RULES, asWorkflow, auditWorkflow } from './audit';
export { auditFindingCounts, saveAudits } from './saved';
