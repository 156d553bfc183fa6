import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	DEFAULT_FAIL_POLICY,
	failMessages,
	type FailPolicy,
	type FailRequest,
	inRange,
	ItemError,
	LIMITS,
	runLink,
	type Store,
} from '../../../lib';
import { range } from '../../shared/range';
import { outboxStoreFor } from './outboxStore';
import { settleItems, settleRequestOf } from './settleOutput';
import {
	businessImpact,
	maskFieldsOption,
	parkOwner,
	parkSeverity,
} from '../../shared/descriptions';
import { trimmedText } from '../../shared/itemValues';

function failRequestOf(context: IExecuteFunctions, itemIndex: number): FailRequest {
	const request = settleRequestOf(context, itemIndex);
	const status = Number(trimmedText(context.getNodeParameter('errorStatus', itemIndex, '')));
	const retryAtText = trimmedText(context.getNodeParameter('retryAt', itemIndex, ''));
	const retryAt = retryAtText ? new Date(retryAtText) : undefined;
	if (retryAt && Number.isNaN(retryAt.getTime()))
		throw new ItemError(
			`Item ${itemIndex}: Retry At ${JSON.stringify(retryAtText)} is not a time`,
			itemIndex,
			'Map Retry At to an ISO time (Idempotent HTTP Write outputs one as retryAt), or leave it empty.',
		);
	return {
		...request,
		// No class given: retried until the attempt cap, the safe side of "nothing is lost".
		errorClass: trimmedText(context.getNodeParameter('errorClass', itemIndex, '')) || 'transient',
		message: trimmedText(context.getNodeParameter('errorMessage', itemIndex, '')) || undefined,
		status: Number.isInteger(status) && status > 0 ? status : undefined,
		retryAt,
	};
}

const list = (value: unknown): string[] =>
	trimmedText(value)
		.split(',')
		.map((entry) => entry.trim())
		.filter(Boolean);

const properties: INodeProperties[] = [
	{
		displayName: 'Error Class',
		name: 'errorClass',
		type: 'string',
		default: '={{ $json.class }}',
		description:
			"The failure's class (Idempotent HTTP Write's Failed output carries it as class). Transient classes are retried; any other is permanent.",
	},
	{
		displayName: 'Error Message',
		name: 'errorMessage',
		type: 'string',
		default: '={{ $json.message }}',
	},
	{
		displayName: 'HTTP Status',
		name: 'errorStatus',
		type: 'string',
		default: '={{ $json.status }}',
	},
	{
		displayName: 'Retry At',
		name: 'retryAt',
		type: 'string',
		default: '={{ $json.retryAt }}',
		description: "Not before this time (the target's Retry-After); empty for the backoff alone",
	},
	{
		displayName: 'Fail Options',
		name: 'failOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Base Delay (Seconds)',
				name: 'baseDelaySeconds',
				type: 'number',
				typeOptions: range(LIMITS.baseDelaySeconds),
				default: 5,
				description: 'Full-jitter backoff: a random delay up to base × 2^(attempt-1)',
			},
			businessImpact(
				'e.g. order not in ERP',
				'Shown with the dead letter; default: "message to crm not delivered" for destination crm',
			),
			maskFieldsOption(
				'e.g. apiKey, ssn',
				'Comma-separated field names to mask in the dead letter, besides the usual secret names',
			),
			{
				displayName: 'Max Attempts',
				name: 'maxAttempts',
				type: 'number',
				typeOptions: range(LIMITS.maxAttempts),
				default: 5,
				description: 'Takes a message gets in all; then it is parked as exhausted',
			},
			{
				displayName: 'Max Delay (Seconds)',
				name: 'maxDelaySeconds',
				type: 'number',
				typeOptions: range(LIMITS.maxDelaySeconds),
				default: 300,
			},
			parkOwner('Who fixes messages parked here'),
			parkSeverity,
			{
				displayName: 'Transient Classes',
				name: 'transientClasses',
				type: 'string',
				default: 'transient, exhausted, rate_limited, unknown_outcome, superseded',
				description:
					'Comma-separated error classes to retry. An unknown outcome is safe to retry because the relay sends the same key. A paused destination (class paused) always waits, without using up attempts.',
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { operation: ['fail'] } }, properties);

/**
 * Fail: a transient failure schedules the message again after a backoff; past the attempt cap,
 * or on a permanent class, the message is parked in the Reliability Store's dead letters (the
 * message as payload, its key, the failure) and marked dead.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const outbox = await outboxStoreFor(this, store);
	const options = this.getNodeParameter('failOptions', 0, {}) as IDataObject;
	const transientClasses = list(options.transientClasses);
	const policy: FailPolicy = {
		maxAttempts: inRange(
			options.maxAttempts ?? DEFAULT_FAIL_POLICY.maxAttempts,
			LIMITS.maxAttempts,
		),
		baseDelayMs:
			options.baseDelaySeconds === undefined
				? DEFAULT_FAIL_POLICY.baseDelayMs
				: inRange(options.baseDelaySeconds, LIMITS.baseDelaySeconds) * 1000,
		maxDelayMs:
			options.maxDelaySeconds === undefined
				? DEFAULT_FAIL_POLICY.maxDelayMs
				: inRange(options.maxDelaySeconds, LIMITS.maxDelaySeconds) * 1000,
		transientClasses:
			transientClasses.length > 0 ? transientClasses : DEFAULT_FAIL_POLICY.transientClasses,
		holdClasses: DEFAULT_FAIL_POLICY.holdClasses,
	};
	const workflow = this.getWorkflow();
	const executionId = this.getExecutionId();
	const baseUrl = this.getInstanceBaseUrl().replace(/\/+$/, '');
	let step = '';
	try {
		step = this.getInputSourceData()?.previousNode ?? '';
	} catch {
		/* no input source: the step is this node */
	}
	return await settleItems(
		this,
		items,
		(index) => failRequestOf(this, index),
		async (requests) =>
			await failMessages(
				outbox,
				requests,
				{
					store,
					workflowId: workflow.id ?? 'unsaved',
					workflowName: workflow.name,
					executionId,
					step: step || this.getNode().name,
					runLink: runLink(baseUrl, workflow.id, executionId),
					owner: trimmedText(options.owner) || undefined,
					impact: trimmedText(options.impact) || undefined,
					severity: trimmedText(options.severity) || undefined,
					maskFields: list(options.maskFields),
				},
				policy,
			),
	);
}
