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

/**
 * Mask Fields of what a node keeps or passes on, besides the secrets always masked: each node
 * says where its masking applies.
 */
export const maskFieldsOption = (placeholder: string, description: string): INodeProperties => ({
	displayName: 'Mask Fields',
	name: 'maskFields',
	type: 'string',
	default: '',
	placeholder,
	description,
});

/** How long a node's records are kept, in days, within the range the engine checks. */
export const retentionDays = (defaultDays: number, description: string): INodeProperties => ({
	displayName: 'Retention (Days)',
	name: 'retentionDays',
	type: 'number',
	typeOptions: range(LIMITS.retentionDays),
	default: defaultDays,
	description,
});

/** How long a handled event ID is remembered: Event Dedupe's Claim and the outbox's Handle Once. */
export const eventIdRetention = retentionDays(
	30,
	'How long an event ID is remembered; keep it longer than any sender retries',
);

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
