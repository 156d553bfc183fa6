import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import {
	checkedEventId,
	inRange,
	LIMITS,
	claimEvents,
	ClaimMode,
	type ClaimRequest,
	ItemError,
	maskValue,
	parseMaskFields,
	type RequiredField,
	type Store,
	toVersion,
	validateItem,
} from '../../../lib';
import { forEachItem } from '../../shared/router';
import { itemValueReader, requiredText } from '../../shared/itemValues';
import { consumerName } from '../../shared/consumer';
import { holdUntilExecutionEnds } from './executionEnd';

/**
 * Claim: reads every item's event ID (and entity version, and validates it), claims the whole
 * run in one batched statement, and routes each item to New, Duplicate, Stale or Invalid. An
 * item that cannot be claimed (no usable event ID or version) is never New: it fails the run,
 * or with Continue On Fail goes to Invalid with the reason.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const checkOrder = this.getNodeParameter('checkOrder', 0, false) as boolean;
	const validate = this.getNodeParameter('validate', 0, false) as boolean;
	const onInvalid = validate ? (this.getNodeParameter('onInvalid', 0, 'route') as string) : 'route';
	const fields = validate
		? ((this.getNodeParameter('requiredFields.field', 0, []) as RequiredField[]) ?? [])
		: [];
	const mode = this.getNodeParameter(
		'claimMode',
		0,
		this.getNode().typeVersion >= 2 ? ClaimMode.untilExecutionEnds : ClaimMode.doneAtClaim,
	) as ClaimMode;
	const inbox = mode === ClaimMode.untilExecutionEnds;
	const leaseSeconds =
		mode === ClaimMode.leaseUntilComplete
			? inRange(this.getNodeParameter('leaseSeconds', 0, 600), LIMITS.claimLeaseSeconds)
			: inbox
				? inRange(this.getNodeParameter('recoverAfterSeconds', 0, 60), LIMITS.recoverAfterSeconds)
				: 600;
	const retentionDays = inRange(
		this.getNodeParameter('retentionDays', 0, 30),
		LIMITS.retentionDays,
	);
	let maxItemBytes = 0;
	let maskFields: string[] = [];
	if (inbox) {
		const options = this.getNodeParameter('inbox', 0, {}) as IDataObject;
		maxItemBytes = inRange(options.maxItemKb ?? 256, LIMITS.inboxMaxItemKb) * 1024;
		maskFields = parseMaskFields(options.maskFields ?? '');
	}
	let overCap = 0;
	/** The item as the inbox keeps it: masked, or only its size when it is over the cap. */
	const kept = (index: number): Pick<ClaimRequest, 'payload' | 'payloadBytes'> => {
		if (!inbox) return {};
		const payload = maskValue(items[index].json, maskFields);
		const bytes = Buffer.byteLength(JSON.stringify(payload) ?? 'null');
		if (bytes <= maxItemBytes) return { payload };
		overCap++;
		return { payloadBytes: bytes };
	};

	const newItems: INodeExecutionData[] = [];
	const duplicates: INodeExecutionData[] = [];
	const stale: INodeExecutionData[] = [];
	const invalid: INodeExecutionData[] = [];
	const requests: ClaimRequest[] = [];
	const eventIdOf = itemValueReader(this, items, 'eventId');
	const entityKeyOf = checkOrder ? itemValueReader(this, items, 'entityKey') : undefined;
	const versionOf = checkOrder ? itemValueReader(this, items, 'entityVersion') : undefined;

	await forEachItem(
		this,
		items,
		(index) => {
			const problem = validate ? validateItem(items[index].json, fields) : undefined;
			if (problem) {
				if (onInvalid === 'fail')
					throw new ItemError(
						`Item ${index} is invalid: ${problem}`,
						index,
						'Fix the sender or the mapping; the item was not claimed.',
					);
				// `error` as n8n's error outputs carry it, so Dead Letter Park records the reason as is.
				invalid.push({
					json: {
						...items[index].json,
						_dedupe: { outcome: 'invalid', message: problem },
						error: problem,
					},
					pairedItem: { item: index },
				});
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
				request.entityKey = requiredText(
					entityKeyOf!,
					'entity key',
					index,
					'Set Entity Key to the ID of the object the event is about.',
				);
				const raw = versionOf!(index);
				const version = toVersion(raw);
				if (version === undefined) {
					throw new ItemError(
						`Item ${index} has no usable entity version (got ${JSON.stringify(raw)})`,
						index,
						"Set Entity Version to the object's version number or updated-at date.",
					);
				}
				request.version = version;
			}
			requests.push(request);
		},
		(failed, index) => {
			const message = String(failed.json.error);
			invalid.push({
				json: { ...items[index].json, _dedupe: { outcome: 'invalid', message }, error: message },
				pairedItem: { item: index },
			});
		},
	);

	const results = await claimEvents(
		store,
		{
			consumer: consumerName(this),
			workflowId: this.getWorkflow().id,
			executionId: this.getExecutionId(),
			mode,
			leaseSeconds,
			retentionDays,
		},
		requests,
	);

	if (inbox && results.some((r) => r.outcome === 'new')) {
		if (!holdUntilExecutionEnds(this, store, leaseSeconds)) {
			this.addExecutionHints({
				message:
					'This n8n does not tell Event Dedupe when an execution ends: the claims are held for up to an hour. Add an Event Dedupe Complete step at the end of the workflow.',
				type: 'warning',
				location: 'outputPane',
			});
		}
	}
	if (overCap > 0) {
		this.addExecutionHints({
			message: `${overCap} item${overCap === 1 ? ' was' : 's were'} over the inbox's Largest Item and ${overCap === 1 ? 'is' : 'are'} not kept with ${overCap === 1 ? 'its claim' : 'their claims'}: if n8n dies during this execution, ${overCap === 1 ? 'it is' : 'they are'} parked without the item. Raise Largest Item (KB) to keep ${overCap === 1 ? 'it' : 'them'}.`,
			type: 'warning',
			location: 'outputPane',
		});
	}

	for (const result of results) {
		const item = items[result.index];
		const pairedItem = { item: result.index };
		if (result.outcome === 'new') {
			newItems.push({ json: item.json, binary: item.binary, pairedItem });
		} else if (result.outcome === 'duplicate') {
			duplicates.push({
				json: {
					...item.json,
					_dedupe: {
						eventId: result.eventId,
						outcome: result.outcome,
						reason: result.reason,
						claimedBy: result.claimedBy ?? null,
					},
				},
				binary: item.binary,
				pairedItem,
			});
		} else {
			// A version that fits a JavaScript number exactly is shown as one; a longer one as text.
			const exact = String(Number(result.lastVersion)) === result.lastVersion;
			stale.push({
				json: {
					...item.json,
					_dedupe: {
						eventId: result.eventId,
						outcome: result.outcome,
						lastVersion: exact ? Number(result.lastVersion) : result.lastVersion,
					},
				},
				binary: item.binary,
				pairedItem,
			});
		}
	}
	const outputs = [newItems, duplicates];
	if (checkOrder) outputs.push(stale);
	if (!(validate && onInvalid === 'fail')) outputs.push(invalid);
	return outputs;
}
