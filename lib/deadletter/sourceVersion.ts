import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonicalJson';

/**
 * The version of the workflow a dead letter was parked from. n8n (1.x and 2.x) does not hand a
 * node its workflow's version ID, so the node computes a fingerprint of the nodes it can see;
 * a version the caller knows (from n8n's API, say) is kept as it is given.
 */

/** A node as the fingerprint reads it: what it does, not where it sits or what it is called. */
export interface FingerprintedNode {
	type: string;
	typeVersion?: number;
	parameters?: unknown;
	disabled?: boolean;
}

/**
 * `fingerprint:<sha256>` of the nodes' types, versions, parameters and disabled flags, in
 * canonical JSON, in an order of their own (so renaming or moving a node does not count as a
 * change, and editing a parameter does).
 */
export function workflowFingerprint(nodes: FingerprintedNode[]): string {
	const entries = nodes
		.map((node) =>
			canonicalJson({
				type: node.type,
				typeVersion: node.typeVersion ?? null,
				parameters: node.parameters ?? {},
				disabled: node.disabled === true,
			}),
		)
		.sort();
	return `fingerprint:${createHash('sha256')
		.update(`[${entries.join(',')}]`)
		.digest('hex')}`;
}
