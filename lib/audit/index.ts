export * from './types';
export { AUDIT_RULES, asWorkflow, auditWorkflow } from './audit';
export { auditFindingCounts, listAudits, type SavedAudit, saveAudits } from './saved';
