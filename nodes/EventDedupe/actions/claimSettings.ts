import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { ClaimMode, inRange, LIMITS, parseMaskFields, type RequiredField } from '../../../lib';

/** How a Claim run claims, read once from the node's parameters. */
export interface ClaimSettings {
	mode: ClaimMode;
	/** Mode "until the execution ends": the claim keeps the item, in the inbox. */
	inbox: boolean;
	leaseSeconds: number;
	retentionDays: number;
	/** Inbox items over this size are kept as their size only (0 without the inbox). */
	maxItemBytes: number;
	/** Field names masked in the items the inbox keeps. */
	maskFields: string[];
	checkOrder: boolean;
	validate: boolean;
	/** An invalid item fails the run, and Invalid is not an output. */
	failInvalid: boolean;
	requiredFields: RequiredField[];
}

export function claimSettingsOf(context: IExecuteFunctions): ClaimSettings {
	const checkOrder = context.getNodeParameter('checkOrder', 0, false) as boolean;
	const validate = context.getNodeParameter('validate', 0, false) as boolean;
	const onInvalid = validate
		? (context.getNodeParameter('onInvalid', 0, 'route') as string)
		: 'route';
	const requiredFields = validate
		? ((context.getNodeParameter('requiredFields.field', 0, []) as RequiredField[]) ?? [])
		: [];
	const mode = context.getNodeParameter(
		'claimMode',
		0,
		context.getNode().typeVersion >= 2 ? ClaimMode.untilExecutionEnds : ClaimMode.doneAtClaim,
	) as ClaimMode;
	const inbox = mode === ClaimMode.untilExecutionEnds;
	const leaseSeconds =
		mode === ClaimMode.leaseUntilComplete
			? inRange(context.getNodeParameter('leaseSeconds', 0, 600), LIMITS.claimLeaseSeconds)
			: inbox
				? inRange(
						context.getNodeParameter('recoverAfterSeconds', 0, 60),
						LIMITS.recoverAfterSeconds,
					)
				: 600;
	const retentionDays = inRange(
		context.getNodeParameter('retentionDays', 0, 30),
		LIMITS.retentionDays,
	);
	let maxItemBytes = 0;
	let maskFields: string[] = [];
	if (inbox) {
		const options = context.getNodeParameter('inbox', 0, {}) as IDataObject;
		maxItemBytes = inRange(options.maxItemKb ?? 256, LIMITS.inboxMaxItemKb) * 1024;
		maskFields = parseMaskFields(options.maskFields ?? '');
	}
	return {
		mode,
		inbox,
		leaseSeconds,
		retentionDays,
		maxItemBytes,
		maskFields,
		checkOrder,
		validate,
		failInvalid: validate && onInvalid === 'fail',
		requiredFields,
	};
}
