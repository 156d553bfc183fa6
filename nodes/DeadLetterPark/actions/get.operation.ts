import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
	updateDisplayOptions,
} from 'n8n-workflow';
import {
	type DeadLetterRecord,
	getDeadLetters,
	getDeadLettersByKey,
	ItemError,
	maskValue,
	type Store,
	toDeadLetter,
} from '../../../lib';
import { itemValueReader, requiredText } from '../../shared/itemValues';
import { toNodeError } from '../../shared/store';
import { errorItem } from '../../shared/errorItem';

/** Which record: by its ID or by the idempotency key it was parked with. */
const properties: INodeProperties[] = [
	{
		displayName: 'Find By',
		name: 'findBy',
		type: 'options',
		options: [
			{ name: 'Dead Letter ID', value: 'id' },
			{ name: 'Idempotency Key', value: 'idempotencyKey' },
		],
		default: 'id',
	},
	{
		displayName: 'Dead Letter ID',
		name: 'deadLetterId',
		type: 'string',
		default: '={{ $json.id }}',
		displayOptions: { show: { findBy: ['id'] } },
	},
	{
		displayName: 'Idempotency Key',
		name: 'lookupKey',
		type: 'string',
		default: '',
		displayOptions: { show: { findBy: ['idempotencyKey'] } },
	},
];

export const description = updateDisplayOptions({ show: { operation: ['get'] } }, properties);

/** Get: each input item names a record by ID or idempotency key; outputs the records with their history. */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const byKey = this.getNodeParameter('findBy', 0, 'id') === 'idempotencyKey';
	const read = itemValueReader(this, items, byKey ? 'lookupKey' : 'deadLetterId');
	const label = byKey ? 'idempotency key' : 'dead letter ID';
	const wanted: string[] = [];
	for (let index = 0; index < items.length; index++) {
		try {
			const value = requiredText(
				read,
				label,
				index,
				`Set ${byKey ? 'Idempotency Key' : 'Dead Letter ID'} to the record to get.`,
			);
			if (!byKey && !/^\d+$/.test(value))
				throw new ItemError(
					`Item ${index}: dead letter ID "${value}" is not a number`,
					index,
					'Dead letter IDs are the numbers Park and List output as id.',
				);
			wanted.push(value);
		} catch (error) {
			throw toNodeError(this, error, index);
		}
	}
	const records = await (
		byKey ? getDeadLettersByKey(store, wanted) : getDeadLetters(store, wanted)
	).catch((error: unknown) => {
		throw toNodeError(this, error);
	});
	const out: INodeExecutionData[] = [];
	wanted.forEach((value, index) => {
		const found = records.filter((r: DeadLetterRecord) =>
			byKey ? r.idempotency_key === value : r.id === value,
		);
		if (found.length === 0) {
			const error = new ItemError(
				`Item ${index}: no dead letter with ${label} "${value}"`,
				index,
				'List shows the records that exist; purged records are gone.',
			);
			if (!this.continueOnFail()) throw toNodeError(this, error, index);
			out.push(errorItem(error, index));
			return;
		}
		// Records are masked when parked; masking again on the way out covers rows parked by
		// older versions and audit reasons.
		for (const record of found)
			out.push({
				json: maskValue(toDeadLetter(record)) as IDataObject,
				pairedItem: { item: index },
			});
	});
	return [out];
}
