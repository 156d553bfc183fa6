/**
 * The n8n page of one execution, as every record, letter and alert links it:
 * `<instance base URL>/workflow/<workflow ID>/executions/<execution ID>`, each ID encoded.
 * Undefined when either ID is missing (an unsaved workflow, a trigger that ran no execution).
 */
export function runLink(
	baseUrl: string,
	workflowId: string | null | undefined,
	executionId: string | null | undefined,
): string | undefined {
	if (!workflowId || !executionId) return undefined;
	return `${baseUrl.replace(/\/+$/, '')}/workflow/${encodeURIComponent(workflowId)}/executions/${encodeURIComponent(executionId)}`;
}

/** The workflow's page in n8n's editor: `<instance base URL>/workflow/<workflow ID>`, encoded. */
export function workflowLink(
	baseUrl: string,
	workflowId: string | null | undefined,
): string | undefined {
	if (!workflowId) return undefined;
	return `${baseUrl.replace(/\/+$/, '')}/workflow/${encodeURIComponent(workflowId)}`;
}
