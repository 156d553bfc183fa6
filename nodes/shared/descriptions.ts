import type { INodeProperties } from 'n8n-workflow';
import { LIMITS } from '../../lib';
import { range } from './range';

/**
 * Parameters that several operations show the same way: one definition, so the editor says the
 * same thing wherever the parameter appears.
 */

/** A list's Limit, as n8n's own list operations show it, within the engine's list limit. */
export function listLimit(name: string, defaultLimit = 50): INodeProperties {
	return {
		displayName: 'Limit',
		name,
		type: 'number',
		typeOptions: range(LIMITS.listLimit),
		default: defaultLimit,
		description: 'Max number of results to return',
	};
}

/** Mask Fields of an alert's text (Compose Alert and Notify). */
export const alertMaskFields: INodeProperties = {
	displayName: 'Mask Fields',
	name: 'alertMaskFields',
	type: 'string',
	default: '',
	placeholder: 'e.g. ssn, iban',
	description:
		'Comma-separated field names to mask in the alert text, besides the secrets always masked: authorization, cookies, API keys, passwords, secrets and tokens',
};
