import type { IExecuteFunctions } from 'n8n-workflow';
import { workflowFingerprint } from '../../lib';

/**
 * The fingerprint of the workflow around this node: itself and every node upstream and
 * downstream of it, as n8n's public node API shows them (getParentNodes and getChildNodes with
 * their parameters). Nodes on unconnected branches are not seen. Undefined when this n8n does
 * not offer that API.
 */
export function sourceVersionOf(context: IExecuteFunctions): string | undefined {
	try {
		const self = context.getNode();
		const options = { includeNodeParameters: true };
		return workflowFingerprint([
			self,
			...context.getParentNodes(self.name, options),
			...context.getChildNodes(self.name, options),
		]);
	} catch {
		return undefined;
	}
}
