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
import { checkEachItem, outputOfEachChecked } from '../../shared/router';

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

/**
 * Get: each input item names a record by ID or idempotency key; one lookup for all of them,
 * then each item's records with their history. An item that names no record it could (empty, or
 * an ID that is not a number) or that names one not found fails the run, or with Continue On
 * Fail is its error item while the others go on.
 */
export async function execute(
	this: IExecuteFunctions,
	store: Store,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[][]> {
	const byKey = this.getNodeParameter('findBy', 0, 'id') === 'idempotencyKey';
	const read = itemValueReader(this, items, byKey ? 'lookupKey' : 'deadLetterId');
	const label = byKey ? 'idempotency key' : 'dead letter ID';
	const checked = await checkEachItem(this, items, (index) => {
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
		// "0012" is record 12: the record's id is compared as the store writes it.
		return byKey ? value : value.replace(/^0+(?=\d)/, '');
	});
	const wanted = [...checked.passed.values()];
	const records =
		wanted.length === 0
			? []
			: await (byKey ? getDeadLettersByKey(store, wanted) : getDeadLetters(store, wanted));
	return [
		await outputOfEachChecked(this, items, checked, (value, index) => {
			const found = records.filter((r: DeadLetterRecord) =>
				byKey ? r.idempotency_key === value : r.id === value,
			);
			if (found.length === 0)
				throw new ItemError(
					`Item ${index}: no dead letter with ${label} "${value}"`,
					index,
					'List shows the records that exist; purged records are gone.',
				);
			// Records are masked when parked; masking again on the way out covers audit reasons
			// and rows written any other way (SQL by hand, a restore).
			return found.map((record) => ({
				json: maskValue(toDeadLetter(record)) as IDataObject,
				pairedItem: { item: index },
			}));
		}),
	];
}
