import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { reliabilityStoreTest } from '../shared/store';
import { description } from './description';
import { write } from './write';

export class IdempotentHttpWrite implements INodeType {
	description: INodeTypeDescription = description;

	methods = { credentialTest: { reliabilityStoreTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await write.call(this);
	}
}
