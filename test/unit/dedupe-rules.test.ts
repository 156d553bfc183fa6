import { checkedEventId, compareVersions, toVersion, validateItem } from '../../lib/dedupe';

describe('entity versions', () => {
	it.each([
		[3, '3'],
		['42', '42'],
		[' 7.5 ', '7.5'],
		['007.50', '7.5'],
		['2026-11-30T10:00:00Z', String(Date.parse('2026-11-30T10:00:00Z'))],
		['2026-11-30T10:00:00.123456Z', `${Date.parse('2026-11-30T10:00:00Z') + 123}.456`],
		[new Date('2026-01-01T00:00:00Z'), String(Date.parse('2026-01-01T00:00:00Z'))],
		['9007199254740993', '9007199254740993'],
	])('orders %j as %s', (input, expected) => {
		expect(toVersion(input)).toBe(expected);
	});

	it.each([undefined, null, '', 'v2', {}, Number.NaN, '2026-13-45'])('refuses %j', (input) => {
		expect(toVersion(input)).toBeUndefined();
	});

	it('takes a BigInt as its exact digits', () => {
		expect(toVersion(9007199254740993n)).toBe('9007199254740993');
	});

	it('orders later dates above earlier ones, to the microsecond', () => {
		const order = (a: unknown, b: unknown) => compareVersions(toVersion(a)!, toVersion(b)!);
		expect(order('2026-11-30T10:00:01Z', '2026-11-30T10:00:00Z')).toBeGreaterThan(0);
		expect(order('2026-11-30T10:00:00.000002Z', '2026-11-30T10:00:00.000001Z')).toBeGreaterThan(0);
		expect(order('2026-11-30T11:00:00.5+01:00', '2026-11-30T10:00:00.5Z')).toBe(0);
	});

	it('orders integers past 2^53 exactly, and negatives below positives', () => {
		expect(compareVersions('9007199254740993', '9007199254740992')).toBeGreaterThan(0);
		expect(compareVersions('-10', '-9')).toBeLessThan(0);
		expect(compareVersions('-1', '0.5')).toBeLessThan(0);
		expect(compareVersions('10.25', '10.3')).toBeLessThan(0);
		expect(compareVersions('100', '99.999')).toBeGreaterThan(0);
	});
});

describe('event IDs', () => {
	it('take text and numbers, refuse structures and control characters, hash what is too long', () => {
		expect(checkedEventId('evt-1')).toEqual({ id: 'evt-1' });
		expect(checkedEventId(42)).toEqual({ id: '42' });
		expect(checkedEventId({})).toEqual({ problem: expect.stringMatching(/an object, not text/) });
		expect(checkedEventId([])).toEqual({ problem: expect.stringMatching(/a list, not text/) });
		expect(checkedEventId('a\u0000b')).toEqual({
			problem: expect.stringMatching(/\(U\+0000\) at position 1/),
		});
		const long = checkedEventId('x'.repeat(3_000));
		expect(long).toEqual({ id: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
		expect(checkedEventId('x'.repeat(3_000))).toEqual(long);
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
