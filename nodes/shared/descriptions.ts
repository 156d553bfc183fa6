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

/** Who fixes what a park leaves: the letter's owner, where alerts route it. */
export const parkOwner = (description = 'Who fixes items parked here'): INodeProperties => ({
	displayName: 'Owner',
	name: 'owner',
	type: 'string',
	default: '',
	placeholder: 'e.g. sales-ops',
	description,
});

/** What the failure means for the business, in the alert's first line. */
export const businessImpact = (
	placeholder = 'e.g. lead not in CRM',
	description?: string,
): INodeProperties => ({
	displayName: 'Business Impact',
	name: 'impact',
	type: 'string',
	default: '',
	placeholder,
	...(description ? { description } : {}),
});

/** What succeeded before the failure, for whoever replays the item. */
export const alreadyHappened: INodeProperties = {
	displayName: 'Already Happened',
	name: 'alreadyHappened',
	type: 'string',
	default: '',
	placeholder: 'e.g. enriched, not in CRM',
	description: 'What succeeded before the failure',
};

/** Page now or the daily digest: the same two choices wherever a letter is parked. */
export const parkSeverity: INodeProperties = {
	displayName: 'Severity',
	name: 'severity',
	type: 'options',
	options: [
		{ name: 'Page Now', value: 'page', description: 'Money or customer-facing' },
		{ name: 'Normal', value: 'normal', description: 'Goes into the daily digest' },
	],
	default: 'normal',
};
