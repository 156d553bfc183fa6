import {
	type IDataObject,
	type IExecuteFunctions,
	type IHttpRequestMethods,
	type INodeExecutionData,
	type INodeProperties,
	NodeOperationError,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	type ApiWorkflow,
	type CredentialRef,
	installBundledWorkflows,
	type Store,
	storeSetupRecords,
	type WorkflowApi,
	type WorkflowBody,
} from '../../../../lib';

const properties: INodeProperties[] = [
	{
		displayName:
			"Run this once from a scratch workflow (a Manual Trigger, then this node) after installing the package, and again after each upgrade. It needs n8n's own n8n API credential (Settings > n8n API makes the key). Optional: a Basic Auth credential for the operator console's sign-in and a Header Auth credential for the metrics token; without them those two workflows are written but not published. Later runs update the bundled workflows in place and keep what you changed in them (a node's parameters, credentials, an enabled alert channel, a workflow you unpublished); the output says what was kept.",
		name: 'setupNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Overwrite Changes',
		name: 'overwrite',
		type: 'boolean',
		default: false,
		description:
			"Whether to replace the nodes you changed in the bundled workflows with this version's (credentials and enabled alert channels stay)",
	},
	{
		displayName: 'Publish',
		name: 'publish',
		type: 'boolean',
		default: true,
		description:
			'Whether to publish (activate) each workflow that has every credential it needs, callees before callers',
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['setup'], operation: ['installWorkflows'] } },
	properties,
);

/** The credential this node was given for `type`, as a node of a bundled workflow refers to it. */
function credentialOf(context: IExecuteFunctions, type: string): CredentialRef | undefined {
	const ref = context.getNode().credentials?.[type];
	return ref?.id ? { id: ref.id, name: ref.name } : undefined;
}

/** n8n's public API, called with the n8n API credential (its key goes in X-N8N-API-KEY). */
async function publicApi(
	context: IExecuteFunctions,
): Promise<{ api: WorkflowApi; baseUrl: string }> {
	const credentials = await context.getCredentials<{ baseUrl: string }>('n8nApi');
	const baseUrl = String(credentials.baseUrl ?? '').replace(/\/+$/, '');
	const call = async <T>(method: IHttpRequestMethods, path: string, body?: object): Promise<T> => {
		try {
			return (await context.helpers.httpRequestWithAuthentication.call(context, 'n8nApi', {
				method,
				url: `${baseUrl}${path}`,
				body,
				json: true,
			})) as T;
		} catch (error) {
			// n8n's request helper throws its own error ("Bad request - please check your
			// parameters"); what n8n's API answered is in its description or its cause.
			const failure = error as {
				description?: unknown;
				cause?: { response?: { data?: { message?: string } } };
				message?: string;
			};
			const message =
				failure.cause?.response?.data?.message ??
				(typeof failure.description === 'string' && failure.description
					? failure.description
					: undefined) ??
				failure.message;
			throw new NodeOperationError(context.getNode(), `n8n API ${method} ${path}: ${message}`);
		}
	};
	const api: WorkflowApi = {
		async list() {
			const all: ApiWorkflow[] = [];
			let cursor: string | undefined;
			do {
				const page = await call<{ data: ApiWorkflow[]; nextCursor?: string | null }>(
					'GET',
					`/workflows?limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
				);
				all.push(...page.data);
				cursor = page.nextCursor ?? undefined;
			} while (cursor);
			return all;
		},
		create: async (body: WorkflowBody) => await call<ApiWorkflow>('POST', '/workflows', body),
		update: async (id: string, body: WorkflowBody) =>
			await call<ApiWorkflow>('PUT', `/workflows/${encodeURIComponent(id)}`, body),
		async activate(id: string) {
			await call('POST', `/workflows/${encodeURIComponent(id)}/activate`);
		},
	};
	return { api, baseUrl };
}

/**
 * Setup > Install Bundled Workflows: every bundled workflow created or updated through n8n's
 * public API, wired and credentialed, then published callees first; one output item per
 * workflow saying what was done and what a person still has to do. Runs once per execution.
 * A workflow that could not be published fails the node after the others were done, naming it
 * and why (a second run is safe: it updates what the first made).
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
): Promise<INodeExecutionData[][]> {
	const storeCredential = credentialOf(this, 'reliabilityStoreApi');
	if (!storeCredential)
		throw new NodeOperationError(
			this.getNode(),
			'Setup needs a saved Reliability Store credential',
			{
				description: 'Choose the Reliability Store credential the bundled workflows should use.',
			},
		);
	const { api, baseUrl } = await publicApi(this);
	const results = await installBundledWorkflows(api, {
		store: storeCredential,
		records: storeSetupRecords(store, baseUrl),
		overwrite: this.getNodeParameter('overwrite', 0, false) as boolean,
		consoleLogin: credentialOf(this, 'httpBasicAuth'),
		metricsToken: credentialOf(this, 'httpHeaderAuth'),
		n8nApi: credentialOf(this, 'n8nApi'),
		publish: this.getNodeParameter('publish', 0, true) as boolean,
	});
	const failed = results.filter((result) => result.error);
	if (failed.length)
		throw new NodeOperationError(
			this.getNode(),
			`Setup wrote every bundled workflow but could not publish ${failed.map((r) => `"${r.name}" (${r.id})`).join(', ')}`,
			{
				description: `${failed.map((r) => `${r.name}: ${r.error}`).join('\n')}\nFix what n8n says, then run Setup again: it updates what it made.`,
			},
		);
	return [
		results.map((result) => ({
			json: result as unknown as IDataObject,
			pairedItem: { item: 0 },
		})),
	];
}
