import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import {
	checkLength,
	inRange,
	LIMITS,
	maskText,
	TEXT_LIMITS,
	parseMaskFields,
	type Range,
	ConfigurationError,
	DEFAULT_POLICY,
	type RetryPolicy,
	UnknownOutcomeStrategy,
	type Compensation,
} from '../../lib';
import { trimmedText } from '../shared/itemValues';

/** The node-level settings of a run (parameters read once, at item 0), checked before anything is sent. */
export interface WriteSettings {
	integration?: string;
	scope: string;
	/** Records of the scope the node's name gave before, moved to `scope` (see scopeOf). */
	adoptScope?: { from: string; to: string };
	sendKey: boolean;
	headerName: string;
	quoting: 'plain' | 'quoted';
	onUnknown: UnknownOutcomeStrategy;
	/**
	 * Reconcile by lookup: how long after a request's timeout the target may still commit it (the
	 * lookup waits it out before it reads, so a late commit is found rather than sent again).
	 */
	commitHorizonMs?: number;
	onFailure: 'parkAndRoute' | 'parkAndFail' | 'route';
	/** Route only: park the failed items when the execution is stopped (no output then runs). */
	parkIfStopped: boolean;
	park: { owner?: string; impact?: string; alreadyHappened?: string };
	authentication: string;
	policy: RetryPolicy;
	retentionDays: number;
	maxSavedBodyChars: number;
	concurrency: number;
	breaker?: { threshold: number; coolDownSeconds: number };
	responseFormat: 'body' | 'full' | 'inputAndResponse';
	maskFields: string[];
	/** The header carrying the expected version, when the write is conditional. */
	preconditionHeader?: string;
	/** The compensating request's template (filled in at Compensate time), or manual (read per item). */
	compensation: 'none' | 'manual' | Extract<Compensation, { kind: 'request' }>;
}

const statusList = (text: unknown, fallback: number[]): number[] => {
	const list = String(text ?? '')
		.split(',')
		.map((s) => Number(s.trim()))
		.filter((n) => Number.isInteger(n) && n >= 100 && n < 600);
	return list.length > 0 ? list : fallback;
};

/** An HTTP header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function preconditionHeaderOf(context: IExecuteFunctions): string | undefined {
	const mode = context.getNodeParameter('precondition', 0, 'none') as string;
	if (mode === 'ifMatch') return 'If-Match';
	if (mode === 'ifUnmodifiedSince') return 'If-Unmodified-Since';
	if (mode !== 'header') return undefined;
	const name = trimmedText(context.getNodeParameter('preconditionHeader', 0, ''));
	if (!TOKEN.test(name)) {
		throw new ConfigurationError(
			`Version Header "${name}" is not a valid HTTP header name`,
			'Use letters, digits and - (for example X-Expected-Version).',
		);
	}
	return name;
}

/**
 * The compensating request as written: its URL and body are templates over the step's saved
 * response, filled in when Compensate runs, so they are read as the node holds them and never
 * evaluated against the input item (an expression's leading "=" is dropped).
 */
function compensationOf(context: IExecuteFunctions): WriteSettings['compensation'] {
	const mode = context.getNodeParameter('compensation', 0, 'none') as string;
	if (mode === 'manual') return 'manual';
	if (mode !== 'request') return 'none';
	const raw = (name: string): string => {
		const value = context.getNode().parameters[name];
		return typeof value === 'string' ? value.replace(/^=/, '').trim() : '';
	};
	const url = raw('compensationUrl');
	// Only the start is checked: placeholders ({{ $json.id }}) may hold spaces until filled in.
	if (!/^https?:\/\/[^\s/{}]/i.test(url))
		throw new ConfigurationError(
			`Compensation URL "${url.slice(0, 200)}" is not an http:// or https:// address`,
			"Set it to the URL that reverses this step; {{ $json.id }} takes the id from the step's saved response.",
		);
	const body = raw('compensationBody');
	// The record keeps the template masked: a secret written into it would be sent as [masked].
	if (maskText(url) !== url || (body && maskText(body) !== body))
		throw new ConfigurationError(
			'The compensating request carries a secret in its URL or body',
			'Remove it: the store keeps no secrets, so Compensate would send [masked] in its place. A target that needs a credential is reversed by hand (Repair Plan) or by a workflow whose HTTP Request node uses an n8n credential.',
		);
	return {
		kind: 'request',
		method: context.getNodeParameter('compensationMethod', 0, 'DELETE') as string,
		url,
		...(body ? { body } : {}),
	};
}

/**
 * The keys' scope: the one set (Scope, else Integration), or this workflow and node. The node is
 * named by its ID, which n8n keeps across renames, so renaming it does not lose its keys; records
 * of the scope the node's name gave before move to it on the next run.
 */
function scopeOf(
	chosen: string | undefined,
	workflowId: string | undefined,
	node: { id?: string; name: string },
): Pick<WriteSettings, 'scope' | 'adoptScope'> {
	if (chosen) return { scope: chosen };
	const workflow = workflowId ?? 'unsaved';
	if (!node.id) return { scope: `${workflow}:${node.name}` };
	const scope = `${workflow}:${node.id}`;
	return { scope, adoptScope: { from: `${workflow}:${node.name}`, to: scope } };
}

function checkedOwner(owner: string | undefined): string | undefined {
	checkLength(owner, TEXT_LIMITS.owner);
	return owner;
}

export function readSettings(context: IExecuteFunctions): WriteSettings {
	const node = context.getNode();
	const workflow = context.getWorkflow();
	const idempotency = context.getNodeParameter('idempotency', 0, {}) as IDataObject;
	const retries = context.getNodeParameter('retries', 0, {}) as IDataObject;
	const sendKey = idempotency.sendKey !== false;
	const headerName = trimmedText(idempotency.headerName) || 'Idempotency-Key';
	if (!TOKEN.test(headerName)) {
		throw new ConfigurationError(
			`Header Name "${headerName}" is not a valid HTTP header name`,
			'Use letters, digits and - (for example Idempotency-Key).',
		);
	}
	const integration = trimmedText(context.getNodeParameter('integration', 0, '')) || undefined;
	// Stored in indexed columns of every key record and dead letter: refused before anything runs.
	checkLength(node.name, { ...TEXT_LIMITS.step, label: 'The node name' });
	checkLength(integration, TEXT_LIMITS.integration);
	checkLength(trimmedText(idempotency.scope), TEXT_LIMITS.scope);
	const choice = context.getNodeParameter('onUnknown', 0, 'auto') as string;
	const onUnknown: UnknownOutcomeStrategy =
		choice === 'auto'
			? sendKey
				? UnknownOutcomeStrategy.retry
				: UnknownOutcomeStrategy.park
			: (choice as UnknownOutcomeStrategy);
	const onFailure = context.getNodeParameter(
		'onFailure',
		0,
		'parkAndRoute',
	) as WriteSettings['onFailure'];
	const parkOptions =
		onFailure === 'route' ? {} : (context.getNodeParameter('parkOptions', 0, {}) as IDataObject);
	const seconds = (value: unknown, fallback: number, range: Range) =>
		inRange(value ?? fallback, range) * 1000;
	const baseDelayMs = seconds(retries.baseDelaySeconds, 2, LIMITS.baseDelaySeconds);
	const maxDelayMs = seconds(retries.maxDelaySeconds, 60, LIMITS.maxDelaySeconds);
	const threshold = inRange(retries.breakerThreshold ?? 0, LIMITS.breakerThreshold);
	return {
		integration,
		...scopeOf(trimmedText(idempotency.scope) || integration, workflow.id, node),
		sendKey,
		headerName,
		quoting: idempotency.quoting === 'quoted' ? 'quoted' : 'plain',
		onUnknown,
		commitHorizonMs:
			onUnknown === UnknownOutcomeStrategy.lookup
				? inRange(
						context.getNodeParameter('commitHorizonSeconds', 0, 2),
						LIMITS.commitHorizonSeconds,
					) * 1000
				: undefined,
		onFailure,
		parkIfStopped:
			onFailure !== 'route' || context.getNodeParameter('parkIfStopped', 0, true) === true,
		park: {
			owner: checkedOwner(trimmedText(parkOptions.owner) || undefined),
			impact: trimmedText(parkOptions.impact) || undefined,
			alreadyHappened: trimmedText(parkOptions.alreadyHappened) || undefined,
		},
		authentication: context.getNodeParameter('authentication', 0, 'none') as string,
		policy: {
			maxAttempts: inRange(retries.maxAttempts ?? DEFAULT_POLICY.maxAttempts, LIMITS.maxAttempts),
			baseDelayMs,
			maxDelayMs: Math.max(maxDelayMs, baseDelayMs),
			deadlineMs: seconds(retries.deadlineSeconds, 120, LIMITS.deadlineSeconds),
			retryOn: statusList(retries.retryOn, DEFAULT_POLICY.retryOn),
			neverRetry: statusList(retries.neverRetry, DEFAULT_POLICY.neverRetry),
			conflictOn: statusList(retries.conflictOn, [412]),
			honourRetryAfter: retries.honourRetryAfter !== false,
		},
		// At least a day: longer than any lease, so expiry never meets a write in flight.
		retentionDays: inRange(idempotency.retentionDays ?? 90, LIMITS.retentionDays),
		maxSavedBodyChars: inRange(idempotency.maxSavedBodyKb ?? 64, LIMITS.maxSavedBodyKb) * 1024,
		concurrency: inRange(retries.concurrency ?? 5, LIMITS.concurrency),
		breaker:
			threshold > 0
				? {
						threshold,
						coolDownSeconds: inRange(
							retries.breakerCoolDownSeconds ?? 60,
							LIMITS.breakerCoolDownSeconds,
						),
					}
				: undefined,
		maskFields: parseMaskFields(idempotency.maskFields ?? ''),
		preconditionHeader: preconditionHeaderOf(context),
		compensation: compensationOf(context),
		responseFormat: context.getNodeParameter(
			'responseFormat',
			0,
			'body',
		) as WriteSettings['responseFormat'],
	};
}
