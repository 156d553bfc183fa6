import {
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
	NodeConnectionTypes,
} from 'n8n-workflow';
import { showingErrors } from '../shared/router';
import { reliabilityStoreTest } from '../shared/store';
import { properties } from './description';
import { write } from './write';

/** Request authentication: n8n's generic credential types, each shown for its option. */
const authenticatedBy = (type: string) => ({ show: { authentication: [type] } });

export class IdempotentHttpWrite implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotent HTTP Write',
		name: 'idempotentHttpWrite',
		icon: { light: 'file:idempotentHttpWrite.svg', dark: 'file:idempotentHttpWrite.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: '={{ $parameter.method + " " + $parameter.url }}',
		description:
			'HTTP writes that happen once: an idempotency key per business operation, recorded in Postgres, retries that honour Retry-After, failures parked',
		usableAsTool: true,
		defaults: { name: 'Idempotent HTTP Write' },
		inputs: [NodeConnectionTypes.Main],
		// The write returns two outputs; each must be declared for the editor to draw it. Their
		// names go with each output rather than in outputNames: n8n replaces the outputs of the
		// node's tool version (an AI Agent's tool) with its one tool output but keeps outputNames,
		// which labelled that output "Success".
		outputs: [
			{ type: NodeConnectionTypes.Main, displayName: 'Success' },
			{ type: NodeConnectionTypes.Main, displayName: 'Failed' },
		],
		credentials: [
			{ name: 'reliabilityStoreApi', required: true, testedBy: 'reliabilityStoreTest' },
			// n8n's own generic credential types, as its HTTP Request node uses them.
			{
				// eslint-disable-next-line n8n-nodes-base/node-class-description-credentials-name-unsuffixed
				name: 'httpBasicAuth',
				required: true,
				displayOptions: authenticatedBy('httpBasicAuth'),
			},
			{
				name: 'httpBearerAuth',
				required: true,
				displayOptions: authenticatedBy('httpBearerAuth'),
			},
			{
				name: 'httpHeaderAuth',
				required: true,
				displayOptions: authenticatedBy('httpHeaderAuth'),
			},
			{
				name: 'httpQueryAuth',
				required: true,
				displayOptions: authenticatedBy('httpQueryAuth'),
			},
			{ name: 'oAuth2Api', required: true, displayOptions: authenticatedBy('oAuth2Api') },
		],
		hints: [
			{
				message:
					'The idempotency key is not sent to the target: a lost response cannot be retried safely, so unknown outcomes are parked for review (or reconciled by lookup).',
				type: 'warning',
				location: 'ndv',
				whenToDisplay: 'always',
				displayCondition: '={{ $parameter.idempotency?.sendKey === false }}',
			},
		],
		properties,
	};

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await showingErrors(this, () => write.call(this));
	}
}
