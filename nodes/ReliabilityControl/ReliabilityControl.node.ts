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
			'Operator controls: pause and resume integrations or workflows, heartbeats for scheduled workflows, the operator console and Prometheus metrics',
		defaults: { name: 'Reliability Control' },
		inputs: [NodeConnectionTypes.Main],
		outputs: outputsExpression,
		credentials: [
			{
				name: 'reliabilityStoreApi',
				required: true,
				testedBy: 'reliabilityStoreTest',
				// Composing an alert reads nothing from the store.
				displayOptions: { hide: { resource: ['alert'] } },
			},
		],
		properties,
	};

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
