/** Validation at the first step: required fields with types, so a schema change fails loudly. */
type FieldType = 'any' | 'string' | 'number' | 'boolean' | 'object' | 'array';

export interface RequiredField {
	/** Dot path into the item's JSON, e.g. `contact.email`. */
	path: string;
	type: FieldType;
}

const typeOf = (value: unknown): FieldType =>
	Array.isArray(value) ? 'array' : value === null ? 'any' : (typeof value as FieldType);

const readPath = (json: unknown, path: string): unknown =>
	path
		.split('.')
		.reduce<unknown>(
			(value, key) =>
				value !== null && typeof value === 'object'
					? (value as Record<string, unknown>)[key]
					: undefined,
			json,
		);

/** The first problem with an item, as a message naming the field; undefined when it is valid. */
export function validateItem(json: unknown, fields: RequiredField[]): string | undefined {
	for (const field of fields) {
		const value = readPath(json, field.path);
		if (value === undefined || value === null || value === '')
			return `field "${field.path}" is missing`;
		if (field.type !== 'any' && typeOf(value) !== field.type) {
			return `field "${field.path}" must be ${field.type === 'array' || field.type === 'object' ? 'an' : 'a'} ${field.type}, got ${typeOf(value)}`;
		}
	}
	return undefined;
}
