import { businessKey, checkedKey, ItemError } from '../../lib';
import { type ItemValueReader, trimmedText } from '../shared/itemValues';

/** The parameters a key is made of: a custom key, or the business key's four parts. */
export interface KeyReaders {
	keyMode: ItemValueReader;
	customKey: ItemValueReader;
	source: ItemValueReader;
	recordId: ItemValueReader;
	action: ItemValueReader;
	version: ItemValueReader;
}

const KEY_PARTS = {
	source: 'Source System',
	recordId: 'Record ID',
	action: 'Action',
	version: 'Record Version',
} as const;

/** An item's idempotency key, checked; an ItemError names the item and the part to fix. */
export function idempotencyKeyOf(read: KeyReaders, sendKey: boolean, index: number): string {
	let key: string;
	if (read.keyMode(index) === 'custom') {
		const raw = read.customKey(index);
		if (raw !== null && typeof raw === 'object') {
			throw new ItemError(
				`Item ${index}: the idempotency key is ${Array.isArray(raw) ? 'a list' : 'an object'}, not text`,
				index,
				'Map Key to text or a number that identifies the business operation. Nothing was sent.',
			);
		}
		key = trimmedText(raw);
		if (!key)
			throw new ItemError(
				`Item ${index} has no idempotency key`,
				index,
				'Key evaluated to empty. Map it to the business identity of the write (for example the invoice number and the action); nothing was sent.',
			);
	} else {
		const parts = {
			source: trimmedText(read.source(index)),
			recordId: trimmedText(read.recordId(index)),
			action: trimmedText(read.action(index)),
			version: trimmedText(read.version(index)),
		};
		const missing = (Object.keys(parts) as Array<keyof typeof parts>)
			.filter((part) => !parts[part])
			.map((part) => KEY_PARTS[part]);
		if (missing.length > 0)
			throw new ItemError(
				`Item ${index} has no idempotency key: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} empty`,
				index,
				'The key is built from source, record ID, action and version; every part must have a value. Nothing was sent.',
			);
		key = businessKey(parts);
	}
	const checked = checkedKey(key, sendKey);
	if ('problem' in checked) {
		throw new ItemError(
			`Item ${index}: ${checked.problem}`,
			index,
			'Fix the Key expression; nothing was claimed or sent.',
		);
	}
	return checked.key;
}
