import {
	businessKey,
	checkedKey,
	classifyStatus,
	decideRetry,
	DEFAULT_POLICY,
	derivedKey,
	headerValue,
	MAX_KEY_LENGTH,
	nextDelayMs,
	parseRetryAfter,
	provesNothingDone,
	requestFingerprint,
} from '../../lib/idempotency';

describe('keys and fingerprints', () => {
	it('the same business operation gives the same 48-character key; another version another key', () => {
		const key = businessKey({
			source: 'webform',
			recordId: 'lead-42',
			action: 'crm-create',
			version: '3',
		});
		expect(key).toMatch(/^[0-9a-f]{48}$/);
		expect(
			businessKey({ source: 'webform', recordId: 'lead-42', action: 'crm-create', version: '3' }),
		).toBe(key);
		expect(
			businessKey({ source: 'webform', recordId: 'lead-42', action: 'crm-create', version: '4' }),
		).not.toBe(key);
	});

	it('fingerprints ignore the body key order but not its values, the method or the URL', () => {
		const a = requestFingerprint({
			method: 'post',
			url: 'https://crm/contacts',
			body: { name: 'Ana', phone: '+49' },
		});
		expect(
			requestFingerprint({
				method: 'POST',
				url: 'https://crm/contacts',
				body: { phone: '+49', name: 'Ana' },
			}),
		).toBe(a);
		expect(
			requestFingerprint({
				method: 'POST',
				url: 'https://crm/contacts',
				body: { phone: '+48', name: 'Ana' },
			}),
		).not.toBe(a);
		expect(
			requestFingerprint({
				method: 'PUT',
				url: 'https://crm/contacts',
				body: { phone: '+49', name: 'Ana' },
			}),
		).not.toBe(a);
	});

	it.each([1, 200, 244, 245, 250, 255])(
		'a derived key of a %i-character key the user was allowed is never longer than a key may be',
		(length) => {
			const checked = checkedKey('k'.repeat(length), true);
			if (!('key' in checked)) throw new Error(checked.problem);
			const derived = derivedKey(checked.key, 'compensate');
			expect(derived.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
			expect(checkedKey(derived, true)).toEqual({ key: derived });
			// Short enough: the readable form, so a key compensated before keeps its compensation.
			if (length <= 244) expect(derived).toBe(`${'k'.repeat(length)}:compensate`);
			else expect(derived).toMatch(/^sha256:[0-9a-f]{64}$/);
			expect(derivedKey(checked.key, 'compensate')).toBe(derived);
		},
	);

	it('quotes the header value as the IETF draft has it, or leaves it plain', () => {
		expect(headerValue('abc', 'plain')).toBe('abc');
		expect(headerValue('abc', 'quoted')).toBe('"abc"');
	});
});

describe('retry policy', () => {
	it.each([
		[201, 'success'],
		[204, 'success'],
		[429, 'transient'],
		[503, 'transient'],
		[408, 'transient'],
		[422, 'permanent'],
		[401, 'permanent'],
		[404, 'permanent'],
		[418, 'permanent'],
		[301, 'permanent'],
	])('status %d is %s', (status, expected) => {
		expect(classifyStatus(status, DEFAULT_POLICY)).toBe(expected);
	});

	it.each([
		[429, undefined, true],
		[425, undefined, true],
		[503, 5_000, true],
		[503, undefined, false],
		[502, 5_000, false],
		[500, undefined, false],
		[504, undefined, false],
		[408, undefined, false],
	])('a %d (Retry-After %p ms) proves nothing was done: %p', (status, retryAfterMs, expected) => {
		expect(provesNothingDone(status, retryAfterMs)).toBe(expected);
	});

	it('full jitter stays between 0 and the capped exponential', () => {
		expect(nextDelayMs(1, DEFAULT_POLICY, () => 0.999)).toBe(1998);
		expect(nextDelayMs(3, DEFAULT_POLICY, () => 0.5)).toBe(4000);
		expect(nextDelayMs(10, DEFAULT_POLICY, () => 0.999)).toBe(59940);
		expect(nextDelayMs(2, DEFAULT_POLICY, () => 0)).toBe(0);
	});

	it('reads Retry-After as seconds or as an HTTP date', () => {
		const now = Date.parse('2026-11-30T10:00:00Z');
		expect(parseRetryAfter('2', now)).toBe(2000);
		expect(parseRetryAfter('Mon, 30 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
		expect(parseRetryAfter('Mon, 30 Nov 2026 09:00:00 GMT', now)).toBe(0);
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
	});

	it('waits what Retry-After asks when it fits the deadline, else parks as rate limited at once', () => {
		expect(
			decideRetry({ attempt: 1, startedAtMs: 0, nowMs: 1000, retryAfterMs: 2000 }, DEFAULT_POLICY),
		).toEqual({ kind: 'retry', delayMs: 2000 });
		expect(
			decideRetry(
				{ attempt: 1, startedAtMs: 0, nowMs: 1000, retryAfterMs: 3_600_000 },
				DEFAULT_POLICY,
			),
		).toEqual({ kind: 'rate_limited', retryAt: new Date(3_601_000) });
	});

	it('stops at max attempts and at the deadline', () => {
		expect(decideRetry({ attempt: 5, startedAtMs: 0, nowMs: 0 }, DEFAULT_POLICY)).toEqual({
			kind: 'exhausted',
			reason: 'gave up after 5 attempts',
		});
		expect(
			decideRetry({ attempt: 2, startedAtMs: 0, nowMs: 119_000 }, DEFAULT_POLICY, () => 0.9),
		).toEqual({ kind: 'exhausted', reason: 'deadline of 120 s reached after 2 attempts' });
	});
});
