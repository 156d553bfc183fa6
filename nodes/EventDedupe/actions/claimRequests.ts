import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	checkedEntityKey,
	checkedEventId,
	checkLength,
	type ClaimRequest,
	ItemError,
	maskValue,
	TEXT_LIMITS,
	toVersion,
	validateItem,
} from '../../../lib';
import { itemValueReader, requiredText } from '../../shared/itemValues';
import { forEachItem } from '../../shared/router';
import type { ClaimSettings } from './claimSettings';

/** The claims a run's items ask for, the items that went to Invalid, and how many were too big to keep. */
export interface ItemClaims {
	requests: ClaimRequest[];
	invalid: INodeExecutionData[];
	overCap: number;
}

/** An item on the Invalid output; `error` as n8n's error outputs carry it, so Dead Letter Park records the reason as is. */
const invalidItem = (item: INodeExecutionData, index: number, message: string) => ({
	json: { ...item.json, _dedupe: { outcome: 'invalid', message }, error: message },
	pairedItem: { item: index },
});

/**
 * Reads every item's event ID (and entity version, and validates it). An item that cannot be
 * claimed (no usable event ID or version) is never claimed: it fails the run, or with Continue On
 * Fail goes to Invalid with the reason.
 */
export async function claimRequestsOf(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	settings: ClaimSettings,
): Promise<ItemClaims> {
	const claims: ItemClaims = { requests: [], invalid: [], overCap: 0 };
	/** The item as the inbox keeps it: masked, or only its size when it is over the cap. */
	const kept = (index: number): Pick<ClaimRequest, 'payload' | 'payloadBytes'> => {
		if (!settings.inbox) return {};
		const payload = maskValue(items[index].json, settings.maskFields);
		const bytes = Buffer.byteLength(JSON.stringify(payload) ?? 'null');
		if (bytes <= settings.maxItemBytes) return { payload };
		claims.overCap++;
		return { payloadBytes: bytes };
	};
	const { checkOrder, validate } = settings;
	const eventIdOf = itemValueReader(context, items, 'eventId');
	const entityKeyOf = checkOrder ? itemValueReader(context, items, 'entityKey') : undefined;
	const versionOf = checkOrder ? itemValueReader(context, items, 'entityVersion') : undefined;

	await forEachItem(
		context,
		items,
		(index) => {
			const problem = validate
				? validateItem(items[index].json, settings.requiredFields)
				: undefined;
			if (problem) {
				if (settings.failInvalid)
					throw new ItemError(
						`Item ${index} is invalid: ${problem}`,
						index,
						'Fix the sender or the mapping; the item was not claimed.',
					);
				claims.invalid.push(invalidItem(items[index], index, problem));
				return;
			}
			const checked = checkedEventId(eventIdOf(index));
			if ('problem' in checked) {
				throw new ItemError(
					`Item ${index} ${checked.problem}`,
					index,
					'Set Event ID to an expression that gives the unique ID of the event as text or a number, for example {{ $json.id }}. Nothing was claimed.',
				);
			}
			const request: ClaimRequest = { index, eventId: checked.id, ...kept(index) };
			if (checkOrder) {
				const entity = checkedEntityKey(
					requiredText(
						entityKeyOf!,
						'entity key',
						index,
						'Set Entity Key to the ID of the object the event is about.',
					),
				);
				if ('problem' in entity)
					throw new ItemError(
						`Item ${index} ${entity.problem}`,
						index,
						'Set Entity Key to the ID of the object the event is about, as text or a number.',
					);
				request.entityKey = entity.key;
				const raw = versionOf!(index);
				const version = toVersion(raw);
				if (version === undefined) {
					throw new ItemError(
						`Item ${index} has no usable entity version (got ${JSON.stringify(raw)})`,
						index,
						"Set Entity Version to the object's version number or updated-at date.",
					);
				}
				checkLength(version, TEXT_LIMITS.entityVersion, index, 'the item was not claimed.');
				request.version = version;
			}
			claims.requests.push(request);
		},
		(failed, index) =>
			claims.invalid.push(invalidItem(items[index], index, String(failed.json.error))),
	);
	return claims;
}
