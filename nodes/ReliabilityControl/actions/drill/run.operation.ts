import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	NodeOperationError,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	DRILL_TOKEN,
	DRILL_WARNING,
	type DrillAnswer,
	inRange,
	ItemError,
	LIMITS,
	MAX_DRILL_MINUTES,
	runFireDrill,
	type Store,
} from '../../../../lib';
import { range } from '../../../shared/range';
import { forEachItem } from '../../../shared/router';

const properties: INodeProperties[] = [
	{
		displayName: `${DRILL_WARNING} Switch the integration's drill mode on first, in the console (Controls, Fire drill): it turns itself off after at most ${MAX_DRILL_MINUTES} minutes.`,
		name: 'drillNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Webhook URL',
		name: 'webhookUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://n8n.example.com/webhook/lead-form',
		description:
			"The Production URL of the workflow's Webhook node (the workflow must be active), or its path alone for a webhook of this n8n",
	},
	{
		displayName: 'Sample Payload',
		name: 'payload',
		type: 'json',
		default: '{\n  "submissionId": "$DRILL",\n  "email": "$DRILL@drill.example"\n}',
		required: true,
		description: `What the webhook receives, with ${DRILL_TOKEN} where the event's ID goes: each test sends a new event`,
	},
	{
		displayName: 'Integration',
		name: 'integration',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. crm',
		description:
			"The integration of the workflow's Idempotent HTTP Write that the forced timeout hits (its drill mode must be on)",
	},
	{
		displayName: 'Required Field',
		name: 'requiredField',
		type: 'string',
		default: 'email',
		required: true,
		description:
			'Dot path of a field the workflow requires: the validation test sends the payload without it, and the replay test puts it back',
	},
	{
		displayName: 'Verify URL',
		name: 'verifyUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://crm.test.example/contacts?externalId=$DRILL',
		description: `Optional: a GET that lists the destination's records of the event (${DRILL_TOKEN} where its ID goes); each test checks it holds exactly one (none for the invalid event)`,
	},
	{
		displayName: 'Replay URL',
		name: 'replayUrl',
		type: 'string',
		default: '',
		placeholder: 'e.g. https://n8n.example.com/webhook/reliability-replay',
		description:
			"The webhook of the bundled Reliability: Replay workflow; empty: this n8n's /webhook/reliability-replay",
	},
	{
		displayName: 'Wait Per Test (Seconds)',
		name: 'waitSeconds',
		type: 'number',
		typeOptions: range(LIMITS.drillWaitSeconds),
		default: 60,
		description:
			'How long each test waits for the workflow to settle (its retries, a lookup after a lost answer)',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['drill'], operation: ['run'] } },
	properties,
);

/**
 * Fire Drill > Run: the four failure tests on the workflow behind the webhook, one output item per
 * test (passed, the reason, the event it sent and what the store and the destination held).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const out: INodeExecutionData[] = [];
	const base = this.getInstanceBaseUrl().replace(/\/+$/, '');
	const call = async (
		method: 'GET' | 'POST',
		url: string,
		body?: unknown,
	): Promise<DrillAnswer> => {
		const answer = (await this.helpers
			.httpRequest({
				method,
				url,
				body: body as IDataObject | undefined,
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				timeout: 300_000,
			})
			.catch((error: unknown) => ({
				statusCode: 0,
				body: { error: error instanceof Error ? error.message : String(error) },
			}))) as { statusCode: number; body: unknown };
		return { status: answer.statusCode, body: answer.body };
	};
	await forEachItem(
		this,
		items,
		async (index) => {
			const raw = this.getNodeParameter('payload', index);
			let payload: unknown = raw;
			if (typeof raw === 'string') {
				try {
					payload = JSON.parse(raw);
				} catch (error) {
					throw new NodeOperationError(
						this.getNode(),
						`Item ${index}: the sample payload is not JSON (${(error as Error).message})`,
						{ itemIndex: index, description: 'Write the payload as a JSON object.' },
					);
				}
			}
			if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
				throw new ItemError(
					`Item ${index}: the sample payload must be a JSON object`,
					index,
					'Write what the webhook receives, as an object.',
				);
			const replayUrl =
				(this.getNodeParameter('replayUrl', index, '') as string).trim() ||
				`${base}/webhook/reliability-replay`;
			const verifyUrl = (this.getNodeParameter('verifyUrl', index, '') as string).trim();
			const webhook = String(this.getNodeParameter('webhookUrl', index) ?? '').trim();
			if (!webhook)
				throw new ItemError(
					`Item ${index}: the Webhook URL is empty`,
					index,
					"Copy the Production URL from the workflow's Webhook node, or give its path.",
				);
			const waitSeconds = inRange(
				this.getNodeParameter('waitSeconds', index, 60),
				LIMITS.drillWaitSeconds,
				index,
			);
			const results = await runFireDrill(
				store,
				{
					// A path alone is a webhook of this n8n.
					webhookUrl: /^https?:\/\//.test(webhook)
						? webhook
						: `${base}/webhook/${webhook.replace(/^\/+/, '').replace(/^webhook\//, '')}`,
					payload: payload as Record<string, unknown>,
					integration: (this.getNodeParameter('integration', index) as string).trim(),
					requiredField: (this.getNodeParameter('requiredField', index) as string).trim(),
					verifyUrl: verifyUrl || undefined,
					replayUrl,
					waitMs: waitSeconds * 1000,
					actor: `fire drill (${this.getWorkflow().name ?? 'workflow'} ${this.getExecutionId()})`,
				},
				{
					http: {
						post: async (url, body) => await call('POST', url, body),
						get: async (url) => await call('GET', url),
					},
				},
			);
			for (const result of results)
				out.push({
					json: { ...result, warning: DRILL_WARNING } as unknown as IDataObject,
					pairedItem: { item: index },
				});
		},
		(errorOutput) => out.push(errorOutput),
	);
	return [out];
}
