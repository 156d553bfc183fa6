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

export class EventDedupe implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Event Dedupe',
		name: 'eventDedupe',
		icon: { light: 'file:eventDedupe.svg', dark: 'file:eventDedupe.dark.svg' },
		group: ['transform'],
		// Version 2 claims "until the execution ends" by default, keeping the item, so a crash
		// after n8n answered the sender loses nothing; version 1 keeps "done at claim".
		version: [1, 2],
		defaultVersion: 2,
		subtitle: '={{ $parameter.operation }}',
		description:
			'Process each event once: claims event IDs in Postgres, atomically across executions and workers',
		defaults: { name: 'Event Dedupe' },
		inputs: [NodeConnectionTypes.Main],
		outputs: outputsExpression,
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
