import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	NodeConnectionTypes,
} from 'n8n-workflow';
import { reliabilityStoreTest } from '../shared/store';
import { router } from './actions/router';
import { outputsExpression, properties } from './description';

export class ReliabilityControl implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Reliability Control',
		name: 'reliabilityControl',
		icon: { light: 'file:reliabilityControl.svg', dark: 'file:reliabilityControl.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ $parameter.resource + ": " + $parameter.operation }}',
		description:
			'Operator controls: pause and resume integrations or workflows, heartbeats for scheduled workflows, the operator console, Prometheus metrics and the setup of the bundled workflows',
		defaults: { name: 'Reliability Control' },
		inputs: [NodeConnectionTypes.Main],
		outputs: outputsExpression,
		credentials: [
			{
				name: 'reliabilityStoreApi',
				required: true,
				testedBy: 'reliabilityStoreTest',
				// Composing an alert reads nothing from the store.
				displayOptions: { hide: { operation: ['compose'] } },
			},
			// Setup writes the bundled workflows through n8n's public API with n8n's own API key
			// credential, and sets the console's sign-in and the metrics token on their webhooks
			// when the user has made them.
			{ name: 'n8nApi', required: true, displayOptions: { show: { resource: ['setup'] } } },
			{
				// eslint-disable-next-line n8n-nodes-base/node-class-description-credentials-name-unsuffixed
				name: 'httpBasicAuth',
				required: false,
				displayOptions: { show: { resource: ['setup'] } },
			},
			{
				name: 'httpHeaderAuth',
				required: false,
				displayOptions: { show: { resource: ['setup'] } },
			},
		],
		properties,
	};

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
