import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	type DeadLetterStatus,
	LIMITS,
	listDeadLetters,
	maskValue,
	type Store,
	toDeadLetter,
} from '../../../lib';
import { range } from '../../shared/range';
import { showingErrors } from '../../shared/router';
import { statusOptions } from './statusOptions';
import { listLimit } from '../../shared/descriptions';

/** Which records. */
const properties: INodeProperties[] = [
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add Filter',
		default: {},
		options: [
			{ displayName: 'Error Class', name: 'errorClass', type: 'string', default: '' },
			{ displayName: 'Integration', name: 'integration', type: 'string', default: '' },
			{
				displayName: 'Older Than (Minutes)',
				name: 'olderThanMinutes',
				type: 'number',
				typeOptions: range(LIMITS.olderThanMinutes),
				default: 0,
			},
			{ displayName: 'Owner', name: 'owner', type: 'string', default: '' },
			{ displayName: 'Reason Contains', name: 'search', type: 'string', default: '' },
			{
				displayName: 'Statuses',
				name: 'statuses',
				type: 'multiOptions',
				options: statusOptions,
				default: [],
			},
			{ displayName: 'Step', name: 'step', type: 'string', default: '' },
			{ displayName: 'Workflow ID', name: 'workflowId', type: 'string', default: '' },
		],
	},
	listLimit('limit'),
];

export const description = updateDisplayOptions({ show: { operation: ['list'] } }, properties);

/** List: one search per run (filters from the first item), one output item per record. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const filters = this.getNodeParameter('filters', 0, {}) as IDataObject;
	// The filters come from the first item; an error names it.
	const rows = await showingErrors(
		this,
		async () =>
			await listDeadLetters(store, {
				statuses: (filters.statuses as DeadLetterStatus[] | undefined) ?? [],
				workflowId: filters.workflowId as string | undefined,
				step: filters.step as string | undefined,
				errorClass: filters.errorClass as string | undefined,
				owner: filters.owner as string | undefined,
				integration: filters.integration as string | undefined,
				olderThanMinutes: (filters.olderThanMinutes as number | undefined) || undefined,
				search: filters.search as string | undefined,
				limit: this.getNodeParameter('limit', 0, 50) as number,
			}),
		0,
	);
	// Masked when parked; masked again on the way out for rows written any other way.
	return [
		rows.map((row) => ({
			json: maskValue(toDeadLetter(row)) as IDataObject,
			pairedItem: { item: 0 },
		})),
	];
}
