import {
	ConfigurationError,
	decideFailure,
	DEFAULT_FAIL_POLICY,
	ItemError,
	messageFingerprint,
	outboxStoreConfig,
	parseOutboxMessage,
} from '../../lib';
import { splitParameters } from '../../nodes/TransactionalOutbox/actions/queryParameters';

describe('Query Parameters, as the Postgres node reads them', () => {
	it.each([
		['a, b ,c', ['a', 'b', 'c']],
		['{{ $json.id }}, {{ $json.amount }}', ['{{ $json.id }}', '{{ $json.amount }}']],
		// A comma inside an expression does not split it.
		["{{ [1, 2].join(',') }}, x", ["{{ [1, 2].join(',') }}", 'x']],
		['', []],
		[' , a,,', ['a']],
	])('%j is %j', (raw, entries) => {
		expect(splitParameters(raw)).toEqual(entries);
	});
});

describe('a failed send', () => {
	const policy = { ...DEFAULT_FAIL_POLICY, maxAttempts: 3, baseDelayMs: 1_000, maxDelayMs: 4_000 };
	const half = () => 0.5;

	it('transient classes retry with full-jitter backoff until the attempt cap, then are exhausted', () => {
		expect(decideFailure(1, 'transient', policy, half)).toEqual({ kind: 'retry', delayMs: 500 });
		expect(decideFailure(2, 'exhausted', policy, half)).toEqual({ kind: 'retry', delayMs: 1_000 });
		expect(decideFailure(3, 'rate_limited', policy, half)).toEqual({
			kind: 'dead',
			errorClass: 'exhausted',
		});
	});

	it("an unknown outcome or a write superseded by the key's new owner retries (the same key is sent again); permanent classes give up at once", () => {
		expect(decideFailure(1, 'unknown_outcome', policy, half).kind).toBe('retry');
		expect(decideFailure(1, 'superseded', policy, half).kind).toBe('retry');
		expect(decideFailure(1, 'permanent', policy, half)).toEqual({
			kind: 'dead',
			errorClass: 'permanent',
		});
		expect(decideFailure(1, 'conflict', policy, half)).toEqual({
			kind: 'dead',
			errorClass: 'conflict',
		});
	});

	it('a paused destination holds the message, checked again within a minute, whatever the attempt', () => {
		expect(decideFailure(3, 'paused', policy, half)).toEqual({ kind: 'hold', delayMs: 4_000 });
		expect(decideFailure(99, 'paused', DEFAULT_FAIL_POLICY, half)).toEqual({
			kind: 'hold',
			delayMs: 60_000,
		});
	});

	it('the delay never exceeds the max delay', () => {
		const late = decideFailure(20, 'transient', { ...policy, maxAttempts: 99 }, () => 0.999999);
		expect(late).toEqual({ kind: 'retry', delayMs: 3_999 });
	});
});

describe('a message as a Write step hands it over', () => {
	const raw = {
		destination: 'crm',
		method: 'put',
		url: 'https://crm.example.com/contacts/7',
		idempotencyKey: 'contact:7:v3',
		headers: '{"X-Source": "n8n", "X-Count": 2}',
		body: '{"name": "Ana"}',
		orderingKey: 'contact:7',
	};

	it('is brought into shape: method upper case, JSON text parsed, header values as text', () => {
		expect(parseOutboxMessage(raw, 4, 0)).toEqual({
			destination: 'crm',
			method: 'PUT',
			url: 'https://crm.example.com/contacts/7',
			idempotencyKey: 'contact:7:v3',
			headers: { 'X-Source': 'n8n', 'X-Count': '2' },
			body: { name: 'Ana' },
			orderingKey: 'contact:7',
		});
	});

	it.each([
		[{ idempotencyKey: '' }, /Item 4, message 2 has no idempotency key/],
		[{ destination: ' ' }, /has no destination/],
		[{ method: 'GET' }, /has method "GET"/],
		[{ url: 'crm.example.com' }, /has no usable URL/],
		[{ body: '{not json' }, /body is not valid JSON/],
		[{ headers: '[1]' }, /headers must be an object/],
	])('%j is an error naming the item and the message', (change, message) => {
		const attempt = () => parseOutboxMessage({ ...raw, ...change }, 4, 1);
		expect(attempt).toThrow(ItemError);
		expect(attempt).toThrow(message);
	});

	it('has a fingerprint of what is sent, whatever the key order of its body', () => {
		const a = parseOutboxMessage(raw, 0, 0);
		const b = parseOutboxMessage({ ...raw, body: { name: 'Ana' } }, 0, 0);
		const c = parseOutboxMessage({ ...raw, body: { name: 'Ann' } }, 0, 0);
		expect(messageFingerprint(a)).toBe(messageFingerprint(b));
		expect(messageFingerprint(a)).not.toBe(messageFingerprint(c));
	});
});

describe("n8n's Postgres credential as the outbox database", () => {
	const credential = {
		host: 'db.internal',
		port: 5433,
		database: 'app',
		user: 'app',
		password: 'pw',
		ssl: 'disable',
		maxConnections: 100,
	};

	it('becomes a store in the schema the node names, with a modest pool', () => {
		expect(outboxStoreConfig(credential, 'app_outbox')).toMatchObject({
			host: 'db.internal',
			port: 5433,
			database: 'app',
			schema: 'app_outbox',
			ssl: 'disable',
			maxConnections: 20,
		});
	});

	it('"Ignore SSL issues" speaks TLS without checking the certificate', () => {
		expect(outboxStoreConfig({ ...credential, allowUnauthorizedCerts: true }).ssl).toBe('require');
	});

	it('an SSH tunnel or a bad schema name is refused before connecting', () => {
		expect(() => outboxStoreConfig({ ...credential, sshTunnel: true })).toThrow(ConfigurationError);
		expect(() => outboxStoreConfig(credential, 'App; DROP')).toThrow(ConfigurationError);
	});
});
