/**
 * The audit reads workflows as n8n stores and exports them (its public API's workflow, the n8n
 * node's Workflow > Get Many, a workflow file): only the fields it reasons about are named here.
 */
export interface AuditNode {
	name: string;
	type: string;
	typeVersion?: number;
	id?: string;
	disabled?: boolean;
	parameters?: Record<string, unknown>;
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
	/** stopWorkflow (default), continueRegularOutput or continueErrorOutput. */
	onError?: string;
	/** The setting before onError (n8n < 1.0): failed items go on as ordinary items. */
	continueOnFail?: boolean;
	/** The node's notes (Settings > Notes): where a finding is accepted, with its reason. */
	notes?: string;
}

export interface AuditConnection {
	node: string;
	type?: string;
	index?: number;
}

export interface AuditWorkflow {
	id?: string;
	name?: string;
	active?: boolean;
	nodes: AuditNode[];
	/** By source node name, then connection type (`main`), then output index. */
	connections: Record<string, Record<string, Array<AuditConnection[] | null> | undefined>>;
	settings?: { errorWorkflow?: string };
}

/** What a step of the workflow does: the inventory's first column. */
export type StepKind = 'trigger' | 'read' | 'write' | 'transform' | 'wait';

/** How a failure should be treated: retried, parked for a person, or handled by the business. */
type FailureKind = 'transient' | 'permanent' | 'business' | 'unknown';

export interface FailureMode {
	/** timeout, rate_limit, invalid_data, refused_permission, unknown_outcome, duplicate_delivery. */
	way: string;
	class: FailureKind;
}

/** One step of the failure inventory, in execution order. */
export interface InventoryStep {
	step: string;
	nodeType: string;
	kind: StepKind;
	failures: FailureMode[];
	/** What the workflow does about those failures today, in words. */
	handling: string;
}

export type Severity = 'high' | 'medium' | 'low';

export interface Finding {
	rule: string;
	severity: Severity;
	workflowId: string | null;
	workflowName: string | null;
	node: string | null;
	why: string;
	fix: string;
}

/** A finding its workflow's authors accepted in a note, with their reason. */
export interface AcceptedFinding extends Finding {
	reason: string;
}

/** A line of the reliability checklist: passed, failed, or not applicable to this workflow. */
export interface ChecklistLine {
	id: string;
	check: string;
	result: 'passed' | 'failed' | 'not_applicable';
	/** The node the line is about when it failed (the first one, when several). */
	node: string | null;
}

export interface WorkflowAudit {
	workflowId: string | null;
	workflowName: string | null;
	active: boolean;
	/** Checklist lines passed out of those that apply, 0 to 100 (100 when none apply). */
	score: number;
	checklist: ChecklistLine[];
	inventory: InventoryStep[];
	/** Open findings: each fails its checklist line. */
	findings: Finding[];
	accepted: AcceptedFinding[];
}
