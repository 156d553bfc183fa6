import { ItemError } from '../errors';
import {
	fromTheAttempt,
	httpKeyHeader,
	httpMethod,
	isDedupe,
	isErrorTrigger,
	isHeartbeat,
	isHttpRequest,
	isIdempotentWrite,
	invalidOutput,
	isInbound,
	isPark,
	isSchedule,
	isTrigger,
	isManualTrigger,
	isValidation,
	kindOf,
	numberParam,
	regularOutputs,
	repeatsOnResend,
	shortType,
	textParam,
	writeKeyExpressions,
	writeParks,
} from './nodes';
import type {
	AcceptedFinding,
	AuditConnection,
	AuditNode,
	AuditWorkflow,
	ChecklistLine,
	FailureMode,
	Finding,
	InventoryStep,
	Severity,
	WorkflowAudit,
} from './types';

/**
 * The failure inventory and the reliability checklist of a workflow, computed from its nodes and
 * connections (the seeds' method: every step, how it can fail, whether that is transient or
 * permanent, what the workflow does about it), with findings in the shape of n8n's own security
 * audit: a rule, a severity, the workflow and node, why it matters and the fix.
 */

/** The rules, by ID: what each finds, how bad it is, and the fix. */
export const AUDIT_RULES = {
	'inbound-write-without-dedupe': {
		severity: 'high',
		why: 'A sender, a queue or a poll can deliver the same event again; without a dedupe before it, this write happens once per delivery',
		fix: 'Put Event Dedupe (Claim) right after the trigger, keyed by the event ID',
	},
	'http-write-retry-without-key': {
		severity: 'high',
		why: "n8n's Retry On Fail resends this write after a timeout or a 5xx, when the first request may already have taken effect, and it sends no idempotency key the target could use to answer the repeat",
		fix: 'Replace it with Idempotent HTTP Write, or send an Idempotency-Key header built from the business operation',
	},
	'retry-at-two-layers': {
		severity: 'medium',
		why: "Idempotent HTTP Write already retries transient failures; n8n's Retry On Fail around it multiplies the attempts and retries permanent failures too",
		fix: "Turn off Retry On Fail in the node's settings and set the write's own Retries",
	},
	'key-from-attempt': {
		severity: 'high',
		why: 'The idempotency key changes with every attempt or execution, so a retry or a redelivery is a new operation to the target and happens again',
		fix: 'Build the key from the business operation only: the record ID, the action and a version',
	},
	'no-error-workflow': {
		severity: 'medium',
		why: 'When an execution fails, crashes or times out nobody is told, and the items it held are left where they were',
		fix: "Set an Error Workflow in the workflow's settings (the bundled Reliability: Error handler parks and alerts)",
	},
	'schedule-without-heartbeat': {
		severity: 'medium',
		why: 'A scheduled workflow that stops running fails silently: no execution, so no error',
		fix: 'End the workflow with Reliability Control > Heartbeat > Beat and import Reliability: Heartbeat watch',
	},
	'failed-items-go-nowhere': {
		severity: 'high',
		why: 'Items that fail here leave through an output nothing is connected to, or go on as if they had succeeded: they are lost without a trace',
		fix: 'Connect the failed items to Dead Letter Park (Park), or let the write park them',
	},
	'retention-shorter-than-replay': {
		severity: 'medium',
		why: "Parked items can be replayed for longer than the write's keys are remembered; a replay after that is a new operation and can happen twice",
		fix: "Keep the write's keys at least as long as its dead letters (Retention (Days) under the write's Idempotency options)",
	},
	'write-without-key': {
		severity: 'medium',
		why: 'This write sends no idempotency key: a retry, a replay or a redelivery repeats it at the target',
		fix: 'Replace it with Idempotent HTTP Write, or send an Idempotency-Key header built from the business operation',
	},
	'unkeyable-write-retried': {
		severity: 'high',
		why: "n8n's Retry On Fail repeats this create or change after a timeout, and the node cannot send a key the target could use to answer the repeat",
		fix: 'Use the operation that upserts, write through the Transactional Outbox, or turn Retry On Fail off and park failures for a person',
	},
	'write-not-parked': {
		severity: 'medium',
		why: 'When a write here fails for good, nothing parks the item and no error workflow settles it: it is gone',
		fix: 'Set the write to park its failures, connect them to Dead Letter Park, or set an Error Workflow',
	},
	'park-without-owner': {
		severity: 'low',
		why: 'Items parked here have no owner, so nobody in particular is asked to fix them',
		fix: 'Set Owner in the park options',
	},
	'input-not-validated': {
		severity: 'low',
		why: 'What the trigger delivers reaches a write unchecked: bad input fails at the target, after earlier steps took effect',
		fix: "Check required fields first (Event Dedupe's Validate, an If or a Filter) and park what is invalid",
	},
	'integration-without-owner': {
		severity: 'low',
		why: 'Parked items of this integration have no owner, so alerts cannot reach the person who fixes them',
		fix: 'Set Owner in the park options (a team or a person the alert routes know)',
	},
	'acceptance-of-unknown-rule': {
		severity: 'low',
		why: 'A note accepts a rule the audit does not have, so it accepts nothing: the finding it was meant for (a misspelt rule ID, say) stays open',
		fix: "Write the rule ID as the audit's findings give it (the Reliability Control reference lists them)",
	},
} as const satisfies Record<string, { severity: Severity; why: string; fix: string }>;

type AuditRule = keyof typeof AUDIT_RULES;

/** Each checklist line fails on an open finding of one of its rules; each rule fails one line. */
const CHECK_RULES: Record<keyof typeof CHECKS, AuditRule[]> = {
	dedupe: ['inbound-write-without-dedupe'],
	keyed: ['key-from-attempt', 'write-without-key'],
	unkeyable: ['unkeyable-write-retried'],
	retries: ['http-write-retry-without-key', 'retry-at-two-layers'],
	parked: [
		'write-not-parked',
		'park-without-owner',
		'integration-without-owner',
		'failed-items-go-nowhere',
		'retention-shorter-than-replay',
	],
	alerts: ['no-error-workflow'],
	heartbeat: ['schedule-without-heartbeat'],
	validated: ['input-not-validated'],
};

const CHECKS = {
	dedupe: 'Inbound events are deduplicated before any write',
	keyed: 'Every create or change is keyed from the business operation',
	unkeyable: 'Writes without key support use an upsert, the outbox or a person',
	retries: 'Only transient failures are retried, at one layer',
	parked: 'Exhausted and permanent failures are parked with an owner and a retention',
	alerts: 'Failures alert on outcomes (an error workflow is set)',
	heartbeat: 'Every scheduled workflow has a heartbeat',
	validated: 'Input is validated before the first write',
} as const;

/** Reads one input as a workflow; anything else is the item's own clear error. */
export function asWorkflow(value: unknown, index: number): AuditWorkflow {
	const workflow = value as Partial<AuditWorkflow> | null;
	if (!workflow || typeof workflow !== 'object' || !Array.isArray(workflow.nodes))
		throw new ItemError(
			`Item ${index} is not a workflow: it has no "nodes" list`,
			index,
			"Pass workflows as n8n's n8n node (Workflow > Get Many) outputs them, or as exported workflow files.",
		);
	const bad = workflow.nodes.findIndex(
		(node) => !node || typeof node.name !== 'string' || typeof node.type !== 'string',
	);
	if (bad >= 0)
		throw new ItemError(
			`Item ${index}: node ${bad} of workflow "${String(workflow.name ?? workflow.id ?? '')}" has no name or type`,
			index,
			'Pass workflows as n8n stores them: every node has a name and a type.',
		);
	return { ...workflow, nodes: workflow.nodes, connections: mainConnections(workflow.connections) };
}

/**
 * The main connections as lists of targets per output, whatever shape they were handed in: an
 * output that is not a list, or a target without a node name, is left out rather than fail the
 * audit of every workflow in the run.
 */
function mainConnections(value: unknown): AuditWorkflow['connections'] {
	const out: AuditWorkflow['connections'] = {};
	if (!value || typeof value !== 'object') return out;
	for (const [source, types] of Object.entries(value as Record<string, unknown>)) {
		const main = (types as { main?: unknown } | null)?.main;
		if (!Array.isArray(main)) continue;
		out[source] = {
			main: main.map((targets) =>
				Array.isArray(targets)
					? (targets as unknown[]).filter(
							(t): t is AuditConnection => !!t && typeof (t as AuditConnection).node === 'string',
						)
					: [],
			),
		};
	}
	return out;
}

class Graph {
	readonly byName = new Map<string, AuditNode>();

	constructor(readonly workflow: AuditWorkflow) {
		for (const node of workflow.nodes)
			if (node.type !== 'n8n-nodes-base.stickyNote') this.byName.set(node.name, node);
	}

	get nodes(): AuditNode[] {
		return [...this.byName.values()];
	}

	/** The nodes an output of a node feeds (every output when none is named). */
	next(node: AuditNode, output?: number): AuditNode[] {
		const outputs = this.workflow.connections[node.name]?.main ?? [];
		const chosen = output === undefined ? outputs : [outputs[output] ?? null];
		return chosen
			.flatMap((list) => list ?? [])
			.map((c) => this.byName.get(c.node))
			.filter((n): n is AuditNode => n !== undefined);
	}

	/** Every enabled node reachable from a node (itself excluded). */
	downstream(from: AuditNode, output?: number): AuditNode[] {
		const seen = new Set<string>();
		const queue = this.next(from, output);
		const found: AuditNode[] = [];
		while (queue.length > 0) {
			const node = queue.shift()!;
			if (seen.has(node.name)) continue;
			seen.add(node.name);
			if (!node.disabled) found.push(node);
			queue.push(...this.next(node, node.disabled ? 0 : undefined));
		}
		return found;
	}

	/** The nodes in execution order: breadth first from the triggers, then any left unconnected. */
	ordered(): AuditNode[] {
		const triggers = this.nodes.filter(isTrigger);
		const seen = new Set<string>();
		const order: AuditNode[] = [];
		const queue = [...triggers];
		while (queue.length > 0) {
			const node = queue.shift()!;
			if (seen.has(node.name)) continue;
			seen.add(node.name);
			order.push(node);
			queue.push(...this.next(node));
		}
		return [...order, ...this.nodes.filter((n) => !seen.has(n.name))];
	}

	/**
	 * Walks every path from a node and reports the writes reached before a node `stops` says
	 * passes the guard (a dedupe, a validation): the writes some path reaches unguarded.
	 */
	unguardedWrites(from: AuditNode, guards: (node: AuditNode) => boolean): AuditNode[] {
		const found = new Map<string, AuditNode>();
		const seen = new Set<string>();
		const queue = this.next(from);
		while (queue.length > 0) {
			const node = queue.shift()!;
			if (seen.has(node.name)) continue;
			seen.add(node.name);
			// n8n passes items through a disabled node: it neither guards nor writes.
			if (!node.disabled && guards(node)) continue;
			if (!node.disabled && kindOf(node) === 'write') found.set(node.name, node);
			queue.push(...this.next(node, node.disabled ? 0 : undefined));
		}
		return [...found.values()];
	}
}

function failuresOf(node: AuditNode): FailureMode[] {
	switch (kindOf(node)) {
		case 'trigger':
			return isInbound(node)
				? [
						{ way: 'duplicate_delivery', class: 'business' },
						{ way: 'invalid_data', class: 'permanent' },
					]
				: [];
		case 'read':
			return [
				{ way: 'timeout', class: 'transient' },
				{ way: 'rate_limit', class: 'transient' },
				{ way: 'refused_permission', class: 'permanent' },
				{ way: 'not_found', class: 'business' },
			];
		case 'write':
			return [
				{ way: 'timeout', class: 'transient' },
				{ way: 'rate_limit', class: 'transient' },
				{ way: 'invalid_data', class: 'permanent' },
				{ way: 'refused_permission', class: 'permanent' },
				{ way: 'unknown_outcome', class: 'unknown' },
			];
		case 'wait':
			return [];
		default:
			return ['code', 'function', 'functionItem'].includes(shortType(node))
				? [{ way: 'invalid_data', class: 'permanent' }]
				: [];
	}
}

const UNKNOWN_OUTCOME: Record<string, string> = {
	auto: 'resent with the same key when the key is sent, else parked',
	retry: 'resent with the same key',
	lookup: 'looked up at the target',
	park: 'parked for review',
};
const ON_FAILURE: Record<string, string> = {
	parkAndRoute: 'parks failed items and routes them to Failed',
	parkAndFail: 'parks failed items and fails the execution',
	route: 'routes failed items to Failed, unparked',
};

function handlingOf(node: AuditNode, workflow: AuditWorkflow): string {
	const parts: string[] = [];
	if (isIdempotentWrite(node)) {
		const attempts = numberParam(node, ['retries', 'maxAttempts'], 5);
		const onUnknown = textParam(node, ['onUnknown']) || 'auto';
		parts.push(
			`retries transient failures up to ${attempts} attempts with the same key; an unknown outcome is ${UNKNOWN_OUTCOME[onUnknown] ?? onUnknown}`,
			ON_FAILURE[textParam(node, ['onFailure']) || 'parkAndRoute'] ?? 'parks failed items',
		);
	}
	if (node.retryOnFail)
		parts.push(
			`n8n tries it up to ${node.maxTries ?? 3} times on any failure, ${node.waitBetweenTries ?? 1000} ms apart`,
		);
	const onError = node.onError ?? (node.continueOnFail ? 'continueRegularOutput' : 'stopWorkflow');
	if (onError === 'continueErrorOutput') parts.push('failed items leave through the error output');
	else if (onError === 'continueRegularOutput') parts.push('failed items go on as ordinary items');
	else {
		const errorWorkflow = workflow.settings?.errorWorkflow;
		parts.push(
			`an error stops the execution${errorWorkflow ? ` and error workflow ${errorWorkflow} runs` : ', and no error workflow runs'}`,
		);
	}
	return parts.join('; ');
}

/** The audit of one workflow. */
export function auditWorkflow(workflow: AuditWorkflow): WorkflowAudit {
	const graph = new Graph(workflow);
	const nodes = graph.nodes.filter((n) => !n.disabled);
	const findings: Finding[] = [];
	const find = (rule: AuditRule, node: AuditNode | null, detail?: string) => {
		const { severity, why, fix } = AUDIT_RULES[rule];
		findings.push({
			rule,
			severity,
			workflowId: workflow.id ?? null,
			workflowName: workflow.name ?? null,
			node: node?.name ?? null,
			why: detail ? `${why} (${detail})` : why,
			fix,
		});
	};
	const writes = nodes.filter((n) => kindOf(n) === 'write');
	const isErrorWorkflow = nodes.some(isErrorTrigger);

	// Inbound events reach writes only through a dedupe.
	const inbound = nodes.filter(isInbound);
	// Each write once, naming the triggers that reach it undeduplicated.
	const undeduped = new Map<string, { write: AuditNode; from: string[] }>();
	for (const trigger of inbound)
		for (const write of graph.unguardedWrites(trigger, isDedupe)) {
			const entry = undeduped.get(write.name) ?? { write, from: [] };
			entry.from.push(trigger.name);
			undeduped.set(write.name, entry);
		}
	for (const { write, from } of undeduped.values())
		find('inbound-write-without-dedupe', write, `${from.join(', ')} → ${write.name}`);

	// Keys: sent, and built from the operation rather than the attempt.
	for (const write of writes) {
		if (isHttpRequest(write)) {
			const key = httpKeyHeader(write);
			if (key === undefined || key.trim() === '' || key.trim() === '""') {
				// PUT and DELETE set or remove: sent twice, the same as once.
				if (!repeatsOnResend(write)) continue;
				if (write.retryOnFail)
					find('http-write-retry-without-key', write, `${httpMethod(write)} with Retry On Fail`);
				else find('write-without-key', write, httpMethod(write));
			} else {
				const part = fromTheAttempt(key);
				if (part) find('key-from-attempt', write, `the Idempotency-Key uses ${part}`);
			}
		}
		if (isIdempotentWrite(write)) {
			if (write.retryOnFail) find('retry-at-two-layers', write);
			const part = writeKeyExpressions(write)
				.map(fromTheAttempt)
				.find((p) => p !== undefined);
			if (part) find('key-from-attempt', write, `the key uses ${part}`);
		}
	}
	// Writes of app and database nodes: no key the node can send.
	const unkeyable = writes.filter(
		(w) => !isHttpRequest(w) && !isIdempotentWrite(w) && !w.type.endsWith('.transactionalOutbox'),
	);
	for (const write of unkeyable)
		if (write.retryOnFail && repeatsOnResend(write)) find('unkeyable-write-retried', write);

	// Failed items: every way out of a failing node leads somewhere.
	const parks = nodes.filter(isPark);
	for (const node of nodes) {
		const onError = node.onError ?? (node.continueOnFail ? 'continueRegularOutput' : undefined);
		if (onError === 'continueErrorOutput' && graph.next(node, regularOutputs(node)).length === 0)
			find('failed-items-go-nowhere', node, 'its error output is not connected');
		else if (
			onError === 'continueRegularOutput' &&
			kindOf(node) === 'write' &&
			!graph.downstream(node).some((n) => isPark(n) || isValidation(n))
		)
			find(
				'failed-items-go-nowhere',
				node,
				'failed items go on as ordinary items and nothing checks them',
			);
		const invalid = invalidOutput(node);
		if (invalid !== undefined && graph.next(node, invalid).length === 0)
			find('failed-items-go-nowhere', node, 'its Invalid output is not connected');
		if (
			isIdempotentWrite(node) &&
			!writeParks(node) &&
			graph.next(node, 1).length === 0 &&
			onError !== 'continueErrorOutput'
		)
			find(
				'failed-items-go-nowhere',
				node,
				'Route to Failed Only, and its Failed output is not connected',
			);
	}

	// Retention: a write's keys outlive the dead letters that can be replayed through it (a
	// replay re-runs the write with its key; a forgotten key is a new operation).
	const parkingWrites = nodes.filter((n) => isIdempotentWrite(n) && writeParks(n));
	const replayDays = Math.max(
		0,
		...parks
			.filter((p) => p.type.endsWith('.deadLetterPark'))
			.map((p) => numberParam(p, ['parkOptions', 'retentionDays'], 90)),
		...parkingWrites.map(() => 90),
	);
	if (replayDays > 0) {
		for (const node of nodes.filter(isIdempotentWrite)) {
			const days = numberParam(node, ['idempotency', 'retentionDays'], 90);
			if (days < replayDays)
				find(
					'retention-shorter-than-replay',
					node,
					`kept ${days} days, dead letters ${replayDays} days`,
				);
		}
	}

	// Owners: parked items reach a person; some park or the error workflow takes every failure.
	for (const node of [...parks, ...parkingWrites]) {
		if (!node.type.endsWith('.deadLetterPark') && !isIdempotentWrite(node)) continue;
		const integration = isPark(node)
			? textParam(node, ['parkOptions', 'integration'])
			: textParam(node, ['integration']);
		if (textParam(node, ['parkOptions', 'owner'])) continue;
		if (integration) find('integration-without-owner', node, `integration ${integration}`);
		else find('park-without-owner', node);
	}
	// A workflow only ever called by another one fails its caller, whose error path reports it;
	// one only ever started by hand has a person watching (n8n runs no error workflow for it).
	const standalone = nodes.some(
		(n) => isTrigger(n) && shortType(n) !== 'executeWorkflowTrigger' && !isManualTrigger(n),
	);
	if (
		standalone &&
		writes.length > 0 &&
		parks.length === 0 &&
		parkingWrites.length === 0 &&
		!workflow.settings?.errorWorkflow
	)
		find('write-not-parked', writes[0]);

	// Alerts and heartbeats. An error workflow matters where a failure can leave items or work
	// behind: writes, parks, claims, schedules (a request-and-answer webhook tells its caller).
	const needsErrorWorkflow =
		standalone &&
		!isErrorWorkflow &&
		(writes.length > 0 || parks.length > 0 || nodes.some(isDedupe) || nodes.some(isSchedule));
	if (needsErrorWorkflow && !workflow.settings?.errorWorkflow) find('no-error-workflow', null);
	const schedules = nodes.filter(isSchedule);
	if (schedules.length > 0 && !nodes.some(isHeartbeat))
		for (const schedule of schedules) find('schedule-without-heartbeat', schedule);

	// Validation before the first write, on every path from a trigger that delivers input.
	const unvalidated = new Map<string, AuditNode>();
	for (const trigger of inbound)
		for (const write of graph.unguardedWrites(trigger, isValidation))
			unvalidated.set(write.name, write);
	for (const write of unvalidated.values()) find('input-not-validated', write);

	// What the workflow's authors accepted, with their reason, is reported but does not count.
	const acceptances = acceptancesOf(workflow);
	// An acceptance of a rule that does not exist accepts nothing: said, rather than ignored.
	for (const key of acceptances.keys()) {
		const [on, rule] = key.split('\u0000');
		if (rule in AUDIT_RULES) continue;
		find(
			'acceptance-of-unknown-rule',
			on === '*' ? null : (nodes.find((n) => n.name === on) ?? null),
			`"audit accepts ${rule}"`,
		);
	}
	const accepted: AcceptedFinding[] = [];
	const open: Finding[] = [];
	for (const finding of findings) {
		const reason =
			acceptances.get(`${finding.node ?? ''}\u0000${finding.rule}`) ??
			acceptances.get(`*\u0000${finding.rule}`);
		if (reason !== undefined) accepted.push({ ...finding, reason });
		else open.push(finding);
	}

	const applies: Record<keyof typeof CHECKS, boolean> = {
		dedupe: inbound.length > 0 && writes.length > 0,
		keyed: writes.length > 0,
		unkeyable: unkeyable.length > 0,
		retries: writes.length > 0,
		parked: writes.length > 0,
		alerts: needsErrorWorkflow,
		heartbeat: schedules.length > 0,
		validated: writes.length > 0 && inbound.length > 0,
	};
	// A line applies where the workflow has what it is about, and wherever one of its rules found
	// something: an open finding always costs its line.
	const checklist: ChecklistLine[] = (Object.keys(CHECKS) as Array<keyof typeof CHECKS>).map(
		(id) => {
			const hit = open.find((f) => (CHECK_RULES[id] as string[]).includes(f.rule));
			return {
				id,
				check: CHECKS[id],
				result: hit ? 'failed' : applies[id] ? 'passed' : 'not_applicable',
				node: hit ? (hit.node ?? workflow.name ?? null) : null,
			};
		},
	);
	const applicable = checklist.filter((l) => l.result !== 'not_applicable');
	const passed = applicable.filter((l) => l.result === 'passed').length;
	const inventory: InventoryStep[] = graph
		.ordered()
		.filter((n) => !n.disabled)
		.map((node) => ({
			step: node.name,
			nodeType: node.type,
			kind: kindOf(node),
			failures: failuresOf(node),
			handling:
				kindOf(node) === 'trigger' ? triggerHandling(node, graph) : handlingOf(node, workflow),
		}));
	return {
		workflowId: workflow.id ?? null,
		workflowName: workflow.name ?? null,
		active: workflow.active === true,
		score: applicable.length === 0 ? 100 : Math.round((100 * passed) / applicable.length),
		checklist,
		inventory,
		findings: open,
		accepted,
	};
}

/**
 * A node's notes may accept a rule for that node, and a sticky note for the whole workflow, with
 * the reason, one per line: `audit accepts <rule>[, <rule>]: <reason>`. The finding is then
 * reported as accepted, with that reason, and no checklist line fails on it.
 */
function acceptancesOf(workflow: AuditWorkflow): Map<string, string> {
	const found = new Map<string, string>();
	// Markdown around the line (a list item, a quote, bold) is allowed.
	const pattern = /^[\s>*_#-]*audit accepts\s+([\w-]+(?:\s*,\s*[\w-]+)*)\s*:\s*(.+?)[\s*_]*$/gim;
	for (const node of workflow.nodes) {
		const sticky = node.type === 'n8n-nodes-base.stickyNote';
		const notes = sticky ? String(node.parameters?.content ?? '') : String(node.notes ?? '');
		for (const match of notes.matchAll(pattern))
			for (const rule of match[1].split(',').map((r) => r.trim()))
				found.set(`${sticky ? '*' : node.name}\u0000${rule}`, match[2]);
	}
	return found;
}

function triggerHandling(node: AuditNode, graph: Graph): string {
	if (!isInbound(node)) return 'starts runs itself; nothing is delivered again';
	return graph.downstream(node).some(isDedupe)
		? 'a repeated delivery is answered by the dedupe'
		: 'a repeated delivery runs again';
}
