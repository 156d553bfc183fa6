import { plainText } from '../describe';
import type { AuditNode, StepKind } from './types';

/**
 * What the audit knows of node types: which trigger delivers events that can come again, which
 * step writes, which one deduplicates, parks, beats a heartbeat or validates. A node type is its
 * package and name (`n8n-nodes-base.httpRequest`); this package's nodes are matched by name under
 * any package prefix, so a renamed or scoped install is still recognised.
 */
export const shortType = (node: AuditNode): string =>
	node.type.slice(node.type.lastIndexOf('.') + 1);

const ours = (node: AuditNode, name: string): boolean =>
	node.type.endsWith(`.${name}`) && !node.type.startsWith('n8n-nodes-base.');

const param = (node: AuditNode, name: string): unknown => node.parameters?.[name];

/** Triggers a person starts by hand: n8n runs no error workflow for their executions. */
const MANUAL = new Set(['manualTrigger', 'start', 'manualChatTrigger', 'evaluationTrigger']);

/** Triggers that start on their own schedule or by hand: nothing is delivered to them again. */
const NOT_INBOUND = new Set([
	...MANUAL,
	'scheduleTrigger',
	'cron',
	'interval',
	'errorTrigger',
	'executeWorkflowTrigger',
	'n8nTrigger',
	'workflowTrigger',
]);
const SCHEDULES = new Set(['scheduleTrigger', 'cron', 'interval']);

/** Trigger nodes whose type name does not end in "Trigger". */
const OTHER_TRIGGERS = new Set(['webhook', 'start', 'cron', 'interval', 'emailReadImap']);

export const isTrigger = (node: AuditNode): boolean => {
	const type = shortType(node);
	return /trigger$/i.test(type) || OTHER_TRIGGERS.has(type);
};

export const isManualTrigger = (node: AuditNode): boolean => MANUAL.has(shortType(node));

/** A trigger whose events a sender, a queue or a poll can deliver again. */
export const isInbound = (node: AuditNode): boolean =>
	isTrigger(node) && !NOT_INBOUND.has(shortType(node));

export const isSchedule = (node: AuditNode): boolean => SCHEDULES.has(shortType(node));

export const isErrorTrigger = (node: AuditNode): boolean => shortType(node) === 'errorTrigger';

export const isIdempotentWrite = (node: AuditNode): boolean => ours(node, 'idempotentHttpWrite');

const isOutboxWrite = (node: AuditNode): boolean =>
	ours(node, 'transactionalOutbox') && (plainText(param(node, 'operation')) || 'write') === 'write';

export const isHttpRequest = (node: AuditNode): boolean =>
	node.type === 'n8n-nodes-base.httpRequest';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Methods whose repeat is a second effect: PUT and DELETE set or remove, the same each time. */
const REPEATING_METHODS = new Set(['POST', 'PATCH']);

/** The HTTP method; an expression (decided per item) counts as POST, the method that repeats. */
export const httpMethod = (node: AuditNode): string => {
	const method =
		plainText(param(node, 'method')) || plainText(param(node, 'requestMethod')) || 'GET';
	return method.startsWith('=') ? 'POST' : method.toUpperCase();
};

export const repeatsOnResend = (node: AuditNode): boolean =>
	isHttpRequest(node) ? REPEATING_METHODS.has(httpMethod(node)) : !idempotentChange(node);

/** Operations of n8n's app and database nodes that create, change or remove something. */
const WRITE_OPERATION =
	/^(create|update|delete|remove|upsert|createorupdate|insert|append|appendorupdate|send|post|add|set|move|copy|upload|publish|executequery|execute|cancel|archive|invite|reply|forward|trigger)/i;
const UPSERT_OPERATION = /^(upsert|createorupdate|appendorupdate)/i;
/** Changes that set or remove a named thing: done twice, the same as once. */
const IDEMPOTENT_CHANGE = /^(update|delete|remove|set|move|archive|cancel)/i;
const READ_OPERATION = /^(get|getall|getmany|search|list|lookup|select|read|download|find)/i;

/**
 * The operation a node runs: its own parameter, else the default of its type (n8n stores only
 * the parameters that differ from their defaults), for the common app nodes; '' when unknown.
 */
function operationOf(node: AuditNode): string {
	const given = plainText(param(node, 'operation'));
	if (given) return given;
	return DEFAULT_OPERATIONS[shortType(node)] ?? '';
}

/** The default operation of common app nodes, as n8n's own node descriptions set them. */
const DEFAULT_OPERATIONS: Record<string, string> = {
	slack: 'post',
	emailSend: 'send',
	gmail: 'send',
	telegram: 'sendMessage',
	discord: 'send',
	microsoftTeams: 'create',
	twilio: 'send',
	mattermost: 'post',
	hubspot: 'upsert',
	googleSheets: 'read',
	stripe: 'get',
	readWriteFile: 'read',
	form: 'page',
	jira: 'create',
	trello: 'create',
	asana: 'create',
	clickUp: 'create',
	pipedrive: 'create',
	salesforce: 'create',
	zendesk: 'create',
};

/** A database query is read by its text: a SELECT reads, INSERT … ON CONFLICT or MERGE upserts. */
const queryOf = (node: AuditNode): string =>
	plainText(param(node, 'query')).trim().replace(/^=/, '');
const READ_QUERY =
	/^\s*(with\b[\s\S]*?\bselect\b(?![\s\S]*\b(insert|update|delete)\b)|select\b|show\b|explain\b)/i;
const UPSERT_QUERY = /\bon\s+conflict\b|^\s*merge\b|\bon\s+duplicate\s+key\b/i;

/** A write whose repeat is harmless: an upsert by the node's operation or its query. */
const isUpsert = (node: AuditNode): boolean =>
	UPSERT_OPERATION.test(operationOf(node)) ||
	(/^executeQuery$/i.test(operationOf(node)) && UPSERT_QUERY.test(queryOf(node)));

const idempotentChange = (node: AuditNode): boolean =>
	isUpsert(node) || IDEMPOTENT_CHANGE.test(operationOf(node));

export function kindOf(node: AuditNode): StepKind {
	if (isTrigger(node)) return 'trigger';
	const type = shortType(node);
	if (type === 'wait') return 'wait';
	if (isIdempotentWrite(node) || isOutboxWrite(node)) return 'write';
	if (isHttpRequest(node)) return WRITE_METHODS.has(httpMethod(node)) ? 'write' : 'read';
	// This package's other nodes and n8n's own logic nodes keep state or shape items, not targets.
	if (OUR_NODES.some((name) => ours(node, name))) return 'transform';
	if (node.type.startsWith('n8n-nodes-base.') && CORE_LOGIC.has(type)) return 'transform';
	if (READ_TYPES.has(type)) return 'read';
	// AI nodes (agents, chains, models, memories, tools): no step of the failure inventory's kinds.
	if (node.type.startsWith('@n8n/n8n-nodes-langchain.')) return 'transform';
	const operation = operationOf(node);
	if (/^executeQuery$/i.test(operation) && READ_QUERY.test(queryOf(node))) return 'read';
	if (WRITE_OPERATION.test(operation)) return 'write';
	if (READ_OPERATION.test(operation)) return 'read';
	// An operation the audit does not know (nor, when none is stored, the node's default): no
	// kind it can reason about, so no finding rests on a guess.
	return 'transform';
}

const READ_TYPES = new Set(['rssFeedRead', 'readPdf']);

const OUR_NODES = ['eventDedupe', 'deadLetterPark', 'reliabilityControl', 'transactionalOutbox'];

const CORE_LOGIC = new Set([
	'set',
	'code',
	'function',
	'functionItem',
	'if',
	'filter',
	'switch',
	'merge',
	'noOp',
	'splitInBatches',
	'splitOut',
	'aggregate',
	'itemLists',
	'sort',
	'limit',
	'removeDuplicates',
	'renameKeys',
	'dateTime',
	'crypto',
	'html',
	'xml',
	'markdown',
	'respondToWebhook',
	'stickyNote',
	'stopAndError',
	'executeWorkflow',
	'compareDatasets',
	'summarize',
	'editImage',
	'convertToFile',
	'extractFromFile',
	'moveBinaryData',
	'readBinaryFile',
	'readBinaryFiles',
	'spreadsheetFile',
	'executionData',
	'debugHelper',
]);

/** This package's nodes: the operation given, else the node's default. */
const ourOperation = (node: AuditNode, fallback: string): string =>
	plainText(param(node, 'operation')) || fallback;

const isClaim = (node: AuditNode): boolean =>
	ours(node, 'eventDedupe') && ourOperation(node, 'claim') === 'claim';

/**
 * Takes its items from the store, each once (the outbox's and the dead letters' Take): what
 * follows works on stored, already checked items, not on what a trigger delivered.
 */
const isStoreTake = (node: AuditNode): boolean =>
	(ours(node, 'transactionalOutbox') || ours(node, 'deadLetterPark')) &&
	ourOperation(node, '') === 'take';

/** Deduplicates across executions: Event Dedupe's Claim, or n8n's "processed previously". */
export const isDedupe = (node: AuditNode): boolean =>
	isClaim(node) ||
	isStoreTake(node) ||
	(shortType(node) === 'removeDuplicates' &&
		plainText(param(node, 'operation')) === 'removeItemsSeenInPreviousExecutions');

/** Parks items for a person: Dead Letter Park's Park, or the outbox's Fail (it parks the last try). */
export const isPark = (node: AuditNode): boolean =>
	(ours(node, 'deadLetterPark') && ourOperation(node, 'park') === 'park') ||
	(ours(node, 'transactionalOutbox') && ourOperation(node, '') === 'fail');

/** The write parks its failed items (with an owner a person reads) rather than only routing them. */
export const writeParks = (node: AuditNode): boolean =>
	(plainText(param(node, 'onFailure')) || 'parkAndRoute') !== 'route';

export const isHeartbeat = (node: AuditNode): boolean =>
	ours(node, 'reliabilityControl') &&
	plainText(param(node, 'resource')) === 'heartbeat' &&
	(plainText(param(node, 'operation')) || 'beat') === 'beat';

/** A step that can refuse bad input before anything is written. */
export const isValidation = (node: AuditNode): boolean =>
	['if', 'filter', 'switch', 'code', 'function', 'functionItem', 'stopAndError'].includes(
		shortType(node),
	) ||
	(isClaim(node) && param(node, 'validate') === true) ||
	isStoreTake(node);

/** Event Dedupe's Claim: the output its invalid items leave by, if they leave by one. */
export function invalidOutput(node: AuditNode): number | undefined {
	if (!isClaim(node)) return undefined;
	if (param(node, 'validate') === true && plainText(param(node, 'onInvalid')) === 'fail')
		return undefined;
	return param(node, 'checkOrder') === true ? 3 : 2;
}

/** Regular outputs of a node; an error output (On Error: Continue (using error output)) follows them. */
export function regularOutputs(node: AuditNode): number {
	const type = shortType(node);
	if (type === 'if' || isIdempotentWrite(node)) return 2;
	const invalid = invalidOutput(node);
	if (invalid !== undefined) return invalid + 1;
	if (isClaim(node)) return param(node, 'checkOrder') === true ? 3 : 2;
	if (ours(node, 'eventDedupe')) {
		const operation = ourOperation(node, 'claim');
		return operation === 'recover' || operation === 'failExecution' ? 2 : 1;
	}
	if (type === 'splitInBatches' && (node.typeVersion ?? 1) >= 3) return 2;
	if (type === 'compareDatasets') return 4;
	if (type === 'switch') {
		// Before version 3 a Switch has four outputs; from 3 on, one per rule (one rule by
		// default), the fallback output when it is an extra one, or numberOutputs by expression.
		if ((node.typeVersion ?? 1) < 3) return 4;
		if (plainText(param(node, 'mode')) === 'expression')
			return Math.max(1, Number(param(node, 'numberOutputs') ?? 4) || 4);
		const rules = (param(node, 'rules') as { values?: unknown[] } | undefined)?.values;
		const options = param(node, 'options') as { fallbackOutput?: unknown } | undefined;
		return (
			Math.max(1, Array.isArray(rules) ? rules.length : 1) +
			(options?.fallbackOutput === 'extra' ? 1 : 0)
		);
	}
	return 1;
}

/**
 * The idempotency key an HTTP Request sends, as written, if it sends one: an Idempotency-Key
 * header (any spelling), or a key field of an API that takes it in the body.
 */
export function httpKeyHeader(node: AuditNode): string | undefined {
	const candidates: Array<{ name?: unknown; value?: unknown }> = [];
	const v3 = (param(node, 'headerParameters') as { parameters?: unknown[] } | undefined)
		?.parameters;
	const v1 = (param(node, 'headerParametersUi') as { parameter?: unknown[] } | undefined)
		?.parameter;
	for (const list of [v3, v1])
		if (Array.isArray(list))
			candidates.push(...(list as Array<{ name?: unknown; value?: unknown }>));
	const found = candidates.find((h) => /idempotency[-_ ]?key/i.test(plainText(h.name)));
	if (found) return plainText(found.value);
	const json =
		plainText(param(node, 'jsonHeaders')) + plainText(param(node, 'headerParametersJson'));
	const inJson = /"[^"]*idempotency[-_ ]?key[^"]*"\s*:\s*("(?:[^"\\]|\\.)*"|[^,}]+)/i.exec(json);
	if (inJson) return inJson[1];
	// APIs that take the key in the body: PagerDuty's dedup_key, an idempotency_key field.
	const body = plainText(param(node, 'jsonBody')) + plainText(param(node, 'bodyParameters'));
	const inBody = /\b(?:dedup_key|idempotency_?key)\b["']?\s*[:,]\s*([^,}\]]+)/i.exec(body);
	return inBody ? inBody[1] : undefined;
}

/** The key expressions of an Idempotent HTTP Write, as written (custom key, or the business identity). */
export function writeKeyExpressions(node: AuditNode): string[] {
	if (plainText(param(node, 'keyMode')) === 'custom') return [plainText(param(node, 'customKey'))];
	return ['keySource', 'keyRecordId', 'keyAction', 'keyVersion'].map((name) =>
		plainText(param(node, name)),
	);
}

/** Parts of an expression that change with every attempt or execution, not with the operation. */
const FROM_THE_ATTEMPT: Array<[RegExp, string]> = [
	[/\$execution\.id/, '$execution.id'],
	[/\$now\b/, '$now'],
	[/\$today\b/, '$today'],
	[/\$runIndex\b/, '$runIndex'],
	[/Math\.random\s*\(/, 'Math.random()'],
	[/randomUUID\s*\(|\buuid(v4)?\s*\(|\$uuid\b|\$randomString/i, 'a random or UUID function'],
	[/Date\.now\s*\(|new Date\s*\(\s*\)/, 'the current time'],
];

export function fromTheAttempt(expression: string): string | undefined {
	return FROM_THE_ATTEMPT.find(([pattern]) => pattern.test(expression))?.[1];
}

export const numberParam = (node: AuditNode, path: string[], fallback: number): number => {
	let value: unknown = node.parameters;
	for (const part of path) value = (value as Record<string, unknown> | undefined)?.[part];
	const n = typeof value === 'number' ? value : Number(value);
	return Number.isFinite(n) && value !== '' && value !== undefined ? n : fallback;
};

export const textParam = (node: AuditNode, path: string[]): string => {
	let value: unknown = node.parameters;
	for (const part of path) value = (value as Record<string, unknown> | undefined)?.[part];
	return plainText(value).trim();
};
