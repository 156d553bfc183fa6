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

export class TransactionalOutbox implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Transactional Outbox',
		name: 'transactionalOutbox',
		icon: { light: 'file:transactionalOutbox.svg', dark: 'file:transactionalOutbox.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ $parameter.operation }}',
		description:
			'Write business rows and the events they announce in one transaction; a relay sends the events once, in order, and parks what cannot be sent',
		defaults: { name: 'Transactional Outbox' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{ name: 'reliabilityStoreApi', required: true, testedBy: 'reliabilityStoreTest' },
			{
				// n8n's own Postgres credential type, so the business database needs no second credential.
				// eslint-disable-next-line n8n-nodes-base/node-class-description-credentials-name-unsuffixed
				name: 'postgres',
				required: true,
				displayOptions: { show: { outboxDatabase: ['postgres'] } },
			},
		],
		properties,
	};

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
