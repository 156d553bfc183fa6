import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import { inRange, LIMITS, openIssues, type Store } from '../../../../lib';
import { listLimit } from '../../../shared/descriptions';

const properties: INodeProperties[] = [
	{
		displayName: 'Route',
		name: 'issueRoute',
		type: 'options',
		options: [
			{ name: 'All', value: 'all' },
			{ name: 'Channel', value: 'channel' },
			{ name: 'Daily Digest', value: 'digest' },
			{ name: 'Page', value: 'page' },
		],
		default: 'all',
		description: 'Only the issues routed here when they opened',
	},
	listLimit('issueLimit'),
];

export const description = updateDisplayOptions(
	{ show: { resource: ['alert'], operation: ['listIssues'] } },
	properties,
);

/** List Issues: the open issues, the newest activity first, one item each (the digest's list). */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const route = this.getNodeParameter('issueRoute', 0, 'all') as string;
	const rows = await openIssues(store, {
		route: route === 'all' ? undefined : (route as 'page' | 'channel' | 'digest'),
		limit: inRange(this.getNodeParameter('issueLimit', 0, 50), LIMITS.listLimit),
	});
	return [
		rows.map((row) => ({
			json: {
				id: String(row.id),
				headline: row.headline,
				route: row.route,
				impact: row.impact,
				owner: row.owner,
				workflowId: row.workflow_id,
				workflowName: row.workflow_name,
				step: row.step,
				errorClass: row.error_class,
				cause: row.message,
				items: row.items,
				openItems: row.open_items,
				firstItem: row.first_item,
				lastItem: row.last_item,
				openedAt: new Date(row.opened_at).toISOString(),
				lastParkedAt: new Date(row.last_parked_at).toISOString(),
				link: row.link_base ? `${row.link_base}?issue=${row.id}` : null,
			} as IDataObject,
			pairedItem: { item: 0 },
		})),
	];
}
