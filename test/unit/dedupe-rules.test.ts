import { toVersionNumber, validateItem } from '../../lib/dedupe';

describe('entity versions', () => {
	it.each([
		[3, 3],
		['42', 42],
		[' 7.5 ', 7.5],
		['2026-11-30T10:00:00Z', Date.parse('2026-11-30T10:00:00Z')],
		[new Date('2026-01-01T00:00:00Z'), Date.parse('2026-01-01T00:00:00Z')],
	])('orders %j as %d', (input, expected) => {
		expect(toVersionNumber(input)).toBe(expected);
	});

	it.each([undefined, null, '', 'v2', {}, Number.NaN, '2026-13-45'])('refuses %j', (input) => {
		expect(toVersionNumber(input)).toBeUndefined();
	});

	it('orders later dates above earlier ones', () => {
		expect(toVersionNumber('2026-11-30T10:00:01Z')!).toBeGreaterThan(
			toVersionNumber('2026-11-30T10:00:00Z')!,
		);
	});
});

describe('required fields', () => {
	const fields = [
		{ path: 'email', type: 'string' as const },
		{ path: 'contact.phone', type: 'any' as const },
		{ path: 'tags', type: 'array' as const },
	];

	it('passes a complete item', () => {
		expect(
			validateItem({ email: 'a@b.c', contact: { phone: '+4915' }, tags: [] }, fields),
		).toBeUndefined();
	});

	it('names a missing nested field', () => {
		expect(validateItem({ email: 'a@b.c', contact: {}, tags: [] }, fields)).toBe(
			'field "contact.phone" is missing',
		);
	});

	it('names a field of the wrong type', () => {
		expect(validateItem({ email: 42, contact: { phone: 1 }, tags: [] }, fields)).toBe(
			'field "email" must be a string, got number',
		);
		expect(validateItem({ email: 'a', contact: { phone: 1 }, tags: 'x' }, fields)).toBe(
			'field "tags" must be an array, got string',
		);
	});

	it('treats an empty string as missing', () => {
		expect(validateItem({ email: '', contact: { phone: 1 }, tags: [] }, fields)).toBe(
			'field "email" is missing',
		);
	});
});
