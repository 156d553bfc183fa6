import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	NodeConnectionTypes,
} from 'n8n-workflow';
import { reliabilityStoreTest } from '../shared/store';
import { router } from './actions/router';
import { properties } from './description';

export class DeadLetterPark implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Dead Letter Park',
		name: 'deadLetterPark',
		icon: { light: 'file:deadLetterPark.svg', dark: 'file:deadLetterPark.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ $parameter.operation }}',
		description:
			'Park failed items with everything needed to fix and replay them; inspect, replay and resolve them with an audit trail',
		usableAsTool: true,
		defaults: { name: 'Dead Letter Park' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'reliabilityStoreApi', required: true, testedBy: 'reliabilityStoreTest' },
		],
		properties,
	};

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
