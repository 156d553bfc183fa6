import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { type DeadLetterStatus, listDeadLetters, maskValue, type Store } from '../../../lib';
import { toNodeError } from '../../shared/store';

/** List: one search per run (filters from the first item), one output item per record. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const filters = this.getNodeParameter('filters', 0, {}) as IDataObject;
	const rows = await listDeadLetters(store, {
		statuses: (filters.statuses as DeadLetterStatus[] | undefined) ?? [],
		workflowId: filters.workflowId as string | undefined,
		step: filters.step as string | undefined,
		errorClass: filters.errorClass as string | undefined,
		owner: filters.owner as string | undefined,
		integration: filters.integration as string | undefined,
		olderThanMinutes: (filters.olderThanMinutes as number | undefined) || undefined,
		search: filters.search as string | undefined,
		limit: this.getNodeParameter('limit', 0, 50) as number,
	}).catch((error: unknown) => {
		// The filters come from the first item; an error names it.
		throw toNodeError(this, error, 0);
	});
	// Masked when parked; masked again on the way out for rows parked by older versions.
	return [rows.map((row) => ({ json: maskValue(row) as IDataObject, pairedItem: { item: 0 } }))];
}
