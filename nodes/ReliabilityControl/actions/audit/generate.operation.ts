import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	NodeOperationError,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	asWorkflow,
	auditWorkflow,
	saveAudits,
	type Store,
	type WorkflowAudit,
	workflowLink,
} from '../../../../lib';
import { forEachItem } from '../../../shared/router';

const properties: INodeProperties[] = [
	{
		displayName:
			"Put n8n's own n8n node before this one (Workflow > Get Many, with Return All, and its n8n API credential): each workflow it outputs is audited. Exported workflow files read with Extract From File work as well.",
		name: 'auditNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Whole Instance',
		name: 'wholeInstance',
		type: 'boolean',
		default: true,
		description:
			'Whether the input is every workflow of this n8n: the stored audit then forgets workflows not in it (deleted since). Turn off to audit a few workflows and keep the others as they were.',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['audit'], operation: ['generate'] } },
	properties,
);

/**
 * Audit > Generate: one output item per workflow: its score, the checklist (each line passed,
 * failed with the node it is about, or not applicable), the failure inventory in execution order,
 * and the findings (rule, severity, node, why, fix), open and accepted. The audits are kept in
 * the store for the console and the metrics (`reliability_audit_findings`).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const out: INodeExecutionData[] = [];
	const audits: WorkflowAudit[] = [];
	let refused = 0;
	const editor = this.getInstanceBaseUrl();
	await forEachItem(
		this,
		items,
		(index) => {
			const workflow = asWorkflow(items[index].json, index);
			let audit: WorkflowAudit;
			try {
				audit = auditWorkflow(workflow);
			} catch (error) {
				// A shape the audit did not foresee ends this workflow's item alone, named.
				throw new NodeOperationError(
					this.getNode(),
					`Item ${index}: workflow "${workflow.name ?? workflow.id ?? ''}" could not be audited: ${error instanceof Error ? error.message : String(error)}`,
					{
						itemIndex: index,
						description:
							'Check that the item is a workflow as n8n stores it; the other workflows are audited.',
					},
				);
			}
			audits.push(audit);
			const editorUrl = workflowLink(editor, audit.workflowId) ?? null;
			out.push({
				json: { ...audit, editorUrl } as unknown as IDataObject,
				pairedItem: { item: index },
			});
		},
		(errorOutput) => {
			refused++;
			out.push(errorOutput);
		},
	);
	// An input with a refused item is not the whole instance: nothing is forgotten for it.
	await saveAudits(store, audits, {
		wholeInstance: refused === 0 && (this.getNodeParameter('wholeInstance', 0, true) as boolean),
	});
	return [out];
}
