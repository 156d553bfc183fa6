import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	type ConsoleRequest,
	handleConsoleRequest,
	ItemError,
	LIMITS,
	type Store,
} from '../../../../lib';
import { range } from '../../../shared/range';
import { outputOfEachItem } from '../../../shared/router';

/** The webhook request and the console's options. */
const properties: INodeProperties[] = [
	{
		displayName: 'Request',
		name: 'request',
		type: 'json',
		default: '={{ $json }}',
		description:
			"The Webhook node's item: its headers (for the signed-in operator), query (the page) and body (the action)",
	},
	{
		displayName: 'Options',
		name: 'consoleOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Chart Days',
				name: 'days',
				type: 'number',
				typeOptions: range(LIMITS.chartDays),
				default: 30,
				description: 'How many days the stats page charts',
			},
			{
				displayName: 'Operator Header',
				name: 'operatorHeader',
				type: 'string',
				default: '',
				placeholder: 'e.g. x-forwarded-user',
				description:
					'A header set by a signing-in proxy that names the operator; without it the Basic auth user name is the operator',
			},
			{
				displayName: 'Teams',
				name: 'teams',
				type: 'json',
				default: '',
				placeholder: '{"maria": ["sales-ops"], "ops-lead": ["*"]}',
				description:
					'Who may act on which items: operator → the teams they are in. An operator acts on the items whose owner is one of their teams (* for all) and on items without an owner; anyone not listed sees the console read-only. Empty: every signed-in operator may act on everything.',
			},
			{ displayName: 'Title', name: 'title', type: 'string', default: 'Reliability console' },
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['console'], operation: ['serve'] } },
	properties,
);

/**
 * Serve: one console response per incoming webhook item (its headers, query and body), as
 * `statusCode`, `contentType` and `body` for a Respond to Webhook node. `replayRequested`
 * says how many records the request set to replay, so the workflow can run the Replay
 * workflow at once instead of at its next schedule. An item whose request fails fails the run,
 * or with Continue On Fail is its error item while the other requests are served.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	return [
		await outputOfEachItem(this, items, async (index) => {
			const request = this.getNodeParameter('request', index, {}) as unknown;
			if (typeof request !== 'object' || request === null || Array.isArray(request))
				throw new ItemError(
					`Item ${index}: the request is not an object`,
					index,
					"Set Request to the Webhook node's item, e.g. {{ $json }} (it has headers, query and body).",
				);
			const options = this.getNodeParameter('consoleOptions', index, {}) as {
				operatorHeader?: string;
				title?: string;
				days?: number;
				teams?: string | Record<string, string[]>;
			};
			const response = await handleConsoleRequest(store, request as ConsoleRequest, {
				operatorHeader: options.operatorHeader?.trim() || undefined,
				title: options.title?.trim() || undefined,
				days: options.days,
				teams: options.teams,
				baseUrl: this.getInstanceBaseUrl(),
			});
			return { json: response as unknown as IDataObject, pairedItem: { item: index } };
		}),
	];
}
