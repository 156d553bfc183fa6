/**
 * `npm run check:fuzz`: hostile input through every engine entry of the nodes, on a real
 * Postgres schema of its own. fast-check draws each input: random unicode, control characters
 * and NUL, huge and deeply nested payloads, wrong types for every parameter, header injection,
 * HTML and script in every field, SQL-looking text, negative, NaN and infinite numbers, and
 * canary secrets planted where secrets sit (header values, password fields, Bearer text).
 *
 * Every input must end in a result or an error of the engine's own hierarchy (lib/errors.ts),
 * never a raw database error, a TypeError or a hang; every console page rendered from the
 * fuzzed store must carry no markup of its own making (no `<script`, no `on…=` attribute, no
 * `javascript:` link); no canary may appear in any output or in any column of any table; and
 * the store's invariants (audit trail, pauses, heartbeats) must hold when read back.
 *
 * `--inputs N` (default 1000), `--seed S`, `--ops park,console,…` (only those operations),
 * `--keep DIR` (where a failing input is kept as a file; test/integration/fuzz-regressions by
 * default, where `npm test` replays every kept input: commit it with the fix),
 * `--no-strict-writes` (leaves NUL, unpaired surrogates and hostile text out of write keys,
 * event IDs and the fake target's answers) and `--no-writer-canaries` (the fake target answers
 * without canaries), to narrow a failure down. A failure prints the shrunk input and
 * the seed to run it again; the last line is always the JSON summary.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import fc from 'fast-check';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Client } from 'pg';
import { composeAlert } from '../lib/alerts';
import { consoleSecret, formToken, handleConsoleRequest, prometheusMetrics } from '../lib/console';
import { beat, checkHeartbeats, listHeartbeats, listPauses, pause, resume } from '../lib/control';
import {
	deadLetterStats,
	getDeadLetters,
	getDeadLettersByKey,
	listDeadLetters,
	OPEN_STATUSES,
	parkItems,
	purgeDeadLetters,
	updateDeadLetterStatus,
	updateDeadLetterStatuses,
} from '../lib/deadletter';
import { claimEvents, toVersion } from '../lib/dedupe';
import { isReliabilityError } from '../lib/errors';
import { type Compensation, DEFAULT_POLICY, runWrites, type SendResult } from '../lib/idempotency';
import { compensateDeadLetter } from '../lib/idempotency/compensate';
import { maskText, maskValue } from '../lib/masking';
import { Store } from '../lib/store';
import { traceItem } from '../lib/trace';
import { clientConfig, type PgSettings, pgSettingsFromEnv } from '../dev/harness/postgres';

export interface FuzzOptions {
	inputs: number;
	seed?: number;
	postgres?: PgSettings;
	/**
	 * Whether the fake write target answers with canary secrets in its bodies and messages (the
	 * writer saves them, masked, as `last_error` and `response_body`). On by default.
	 */
	writerCanaries?: boolean;
	/** Keys, event IDs and target answers with NUL, unpaired surrogates and over-long text. On by default. */
	strictWrites?: boolean;
	/** Where a failing input is kept as a file (the seed, the path, the input, the reason). */
	regressionDir?: string;
	/** Only these operations (OPERATIONS names); all by default. */
	only?: string[];
	/** Each input's time budget (BUDGET_BASE_MS and BUDGET_MS_PER_100_KB by default). */
	timeBudget?: { baseMs: number; msPer100Kb: number };
	/** How long shrinking a failing input may go on (SHRINK_BUDGET_MS, SHRINK_MAX_STEPS by default). */
	shrinkBudget?: { ms: number; steps: number };
	log?: (line: string) => void;
}

export interface FuzzFailure {
	kind: 'crash' | 'unescaped' | 'leak' | 'invariant' | 'slow' | 'overmasked';
	detail: string;
}

export interface FuzzResult {
	inputs: number;
	seed: number;
	/** Inputs that crashed, hung, or left the store corrupt (an invariant broken). */
	crashes: number;
	unescaped: number;
	leaks: number;
	/** Inputs that took longer than their time budget (super-linear work is a finding). */
	slow: number;
	/** Ordinary payloads (ids, hashes, UUIDs, base64) that masking changed. */
	overmasked: number;
	/** Where the failing input was kept, to run again. */
	regressionFile?: string;
	/** The shrunk input that failed, as JSON (long strings cut), and why. */
	failure?: { input: string; path?: string; reason: string };
	/** Whether shrinking the failing input was cut short by its budget (SHRINK_BUDGET_MS, SHRINK_MAX_STEPS). */
	shrinkCapped?: boolean;
}

class FuzzFinding extends Error {
	constructor(readonly finding: FuzzFailure) {
		super(`${finding.kind}: ${finding.detail}`);
	}
}

const PER_INPUT_TIMEOUT_MS = 30_000;

/**
 * Shrinking re-runs smaller variants of a failing input until none fails: a slow input's
 * variants are slow too, and shrinking one ran for hours. After this long, or this many
 * variants, every further variant passes untried, so fast-check stops at the smallest failing
 * input found so far and the finding is reported and kept.
 */
const SHRINK_BUDGET_MS = 60_000;
const SHRINK_MAX_STEPS = 300;

/**
 * Each input's time budget: a fixed part for its round trips to Postgres, and 50 ms per 100 KB
 * of input, so work that grows faster than the input (quadratic masking took 13 s for 4 MB)
 * is a finding even when it ends.
 */
const BUDGET_BASE_MS = 3_000;
const BUDGET_MS_PER_100_KB = 50;

/** An input's size in characters, as JSON (a structure too deep to write counts as none). */
function sizeOf(value: unknown): number {
	try {
		return JSON.stringify(value)?.length ?? 0;
	} catch {
		return 0;
	}
}

// ---------------------------------------------------------------------------------------------
// What the inputs are made of

/** Text an attacker or a broken upstream sends. */
const HOSTILE_TEXT = [
	'<script>alert(1)</script>',
	'"><img src=x onerror=alert(1)>',
	"' autofocus onfocus='alert(1)",
	'javascript:alert(1)',
	'<svg/onload=alert(1)>',
	"'; DROP TABLE dead_letters; --",
	"' OR '1'='1",
	'$1::text',
	'\\',
	'\u0000',
	'\u0000\u0001\u0002\u001f\u007f',
	'\r\nX-Injected: yes\r\n\r\n',
	'%0d%0aSet-Cookie:%20a=b',
	'{{ $json.secret }}',
	'${process.env}',
	'__proto__',
	'constructor',
	'\ud800',
	'\udfff\ud800',
	'😀'.repeat(50),
	'\u202e\u2066RTL',
	'Ａ\ufeff\u200b',
	' ',
	'',
	'a'.repeat(10_000),
	'null',
	'[]',
	'{"a":',
];

/**
 * Random text of 1 to 64 KB that does not compress: a btree index row holds about 2.7 KB, and
 * Postgres compresses a value before it checks, so `'a'.repeat(10_000)` fits where a token of
 * that length does not. Made from a seed the run draws, so a failure replays.
 */
const longText = (): fc.Arbitrary<string> =>
	fc
		.tuple(fc.integer({ min: 1024, max: 64 * 1024 }), fc.integer())
		.map(([length, seed]) => incompressible(length, seed));

const TEXT_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_.~:;=&% ';
function incompressible(length: number, seed: number): string {
	let state = seed | 0 || 1;
	const bytes = Buffer.allocUnsafe(length);
	for (let i = 0; i < length; i++) {
		// xorshift32: cheap, and nothing pglz can find repeated in it.
		state ^= state << 13;
		state ^= state >>> 17;
		state ^= state << 5;
		bytes[i] = TEXT_CHARS.charCodeAt((state >>> 0) % TEXT_CHARS.length);
	}
	return bytes.toString('latin1');
}

/**
 * A CSV- or log-like text of 1 to 4 MB with one kind of separator (`=` or `:`) and not the
 * other: the shape that made masking quadratic.
 */
const bigSeparatedText = (): fc.Arbitrary<string> =>
	fc
		.tuple(fc.integer({ min: 1, max: 4 }), fc.integer(), fc.constantFrom('=', ':'))
		.map(([megabytes, seed, separator]) =>
			incompressible(megabytes * 1_000_000, seed)
				.replace(/[:=]/g, ',')
				.replace(/[%&;~._-]/g, separator),
		);

const hostileText = (): fc.Arbitrary<string> =>
	fc.oneof(
		{ weight: 3, arbitrary: fc.constantFrom(...HOSTILE_TEXT) },
		{ weight: 1, arbitrary: longText() },
		{ weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
		{ weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
		{
			weight: 2,
			arbitrary: fc
				.array(fc.constantFrom(...HOSTILE_TEXT, 'ok', ' ', 'x'), { maxLength: 4 })
				.map((parts) => parts.join('')),
		},
	);

const hostileNumber = (): fc.Arbitrary<number> =>
	fc.oneof(
		fc.constantFrom(
			0,
			-1,
			1,
			Number.NaN,
			Number.POSITIVE_INFINITY,
			Number.NEGATIVE_INFINITY,
			-0,
			2 ** 31,
			2 ** 53,
			1e308,
			0.5,
			-1e-9,
		),
		fc.integer(),
		fc.double(),
	);

/** A value of any type, for a parameter that expects another. */
const anyType = (): fc.Arbitrary<unknown> =>
	fc.oneof(
		hostileText(),
		hostileNumber(),
		fc.boolean(),
		fc.constant(null),
		fc.constant(undefined),
		fc.array(fc.oneof(hostileText(), hostileNumber()), { maxLength: 3 }),
		fc.dictionary(hostileText(), hostileText(), { maxKeys: 3 }),
	);

/** Mostly a plausible value, sometimes anything at all. */
const param = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
	fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: anyType() });

/** A structure nested `depth` levels deep. */
const deep = (depth: number, leaf: unknown): unknown => {
	let value: unknown = leaf;
	for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { n: value };
	return value;
};

// ---------------------------------------------------------------------------------------------
// Canary secrets, planted where secrets sit

/**
 * Realistic secret names, from public secret scanners' rule names and common API fields, each
 * written in every case and separator style (`aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`,
 * `awsSecretAccessKey`, `AwsSecretAccessKey`, `aws-secret-access-key`, `Aws-Secret-Access-Key`,
 * `aws.secret.access.key`): several hundred names.
 */
const SECRET_NAME_WORDS = [
	'authorization',
	'proxy authorization',
	'cookie',
	'set cookie',
	'x api key',
	'api key',
	'api secret',
	'api secret key',
	'secret',
	'secret key',
	'client secret',
	'app secret',
	'consumer secret',
	'webhook secret',
	'jwt secret',
	'hmac secret',
	'totp secret',
	'token',
	'access token',
	'refresh token',
	'id token',
	'auth token',
	'session token',
	'bearer token',
	'oauth token',
	'oauth token secret',
	'github token',
	'slack bot token',
	'twilio auth token',
	'aws session token',
	'password',
	'passwd',
	'pwd',
	'passphrase',
	'db password',
	'smtp password',
	'ldap bind password',
	'postgres password',
	'mysql root password',
	'redis password',
	'admin password',
	'private key',
	'private key pem',
	'ssh private key',
	'aws secret access key',
	'secret access key',
	'account key',
	'storage account key',
	'shared access key',
	'signing key',
	'encryption key',
	'master key',
	'stripe secret key',
	'sendgrid api key',
	'openai api key',
	'google api key',
	'credentials',
	'basic auth',
	'sig',
];
const styled = (words: string[]): string[] => {
	const title = (w: string) => w[0].toUpperCase() + w.slice(1);
	return [
		words.join('_'),
		words.join('_').toUpperCase(),
		words[0] + words.slice(1).map(title).join(''),
		words.map(title).join(''),
		words.join('-'),
		words.map(title).join('-'),
		words.join('.'),
	];
};
const SECRET_NAMES = [...new Set(SECRET_NAME_WORDS.flatMap((name) => styled(name.split(' '))))];

/** A canary shaped like a credential of a well-known form, to be masked whatever its name. */
const shapedSecret = (canary: string): fc.Arbitrary<string> =>
	fc.constantFrom(
		`-----BEGIN RSA PRIVATE KEY-----\nMIIEow${canary}\n-----END RSA PRIVATE KEY-----`,
		`-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl${canary}`,
		`eyJhbGciOiJIUzI1NiJ9.eyJzdWIi${canary}.c2ln`,
		`https://app:${canary}@db.internal:5432/app`,
		`Server=db;Database=app;User Id=sa;Password=${canary};`,
		`Driver={ODBC};Uid=sa;Pwd=${canary};`,
		`DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=${canary}==;EndpointSuffix=core.windows.net`,
		`https://shop.blob.core.windows.net/c/f?sv=2022-11-02&se=2030&sig=${canary}%3D`,
		`ghp_${canary}${canary}`,
		`github_pat_11AB_${canary}${canary}`,
		`xoxb-1234567890-${canary}`,
		`https://hooks.slack.com/services/T0001/B0002/${canary}`,
		`sk_live_${canary}`,
		`whsec_${canary}`,
		`AIza${`${canary}${'x'.repeat(35)}`.slice(0, 35)}`,
		`glpat-${canary}`,
		`the password ${canary} was refused`,
		`passphrase is ${canary}`,
	);

/** A canary in one of the forms secrets take; `canary` is unique to the run. */
const plantedSecret = (canary: string): fc.Arbitrary<unknown> =>
	fc.oneof(
		fc.constantFrom(...SECRET_NAMES).map((name) => ({ [name]: canary })),
		fc.constantFrom(...SECRET_NAMES).map((name) => ({ headers: [{ name, value: canary }] })),
		fc.constant({ headers: { authorization: `Bearer ${canary}` } }),
		fc.constantFrom(...SECRET_NAMES).map((name) => JSON.stringify({ [name]: canary })),
		fc.constantFrom(...SECRET_NAMES).map((name) => `upstream said ${name}=${canary}; retry`),
		fc
			.constantFrom(...SECRET_NAMES)
			.map((name) => `https://api.example.com/v1/x?page=2&${name}=${canary}&limit=5`),
		fc.constant(`401 Unauthorized (Authorization: Bearer ${canary})`),
		fc.constant(`postgres://app:${canary}@db:5432/app`),
		shapedSecret(canary),
		shapedSecret(canary).map((value) => ({ value, note: 'ordinary name' })),
		shapedSecret(canary).map((value) => `error from upstream: ${value} (retrying)`),
		shapedSecret(canary).map((value) => ({ headers: [{ name: 'X-Custom', value }] })),
	);

/**
 * What masking must leave alone: ids, hashes, UUIDs, base64 data, timestamps, usage counts and
 * names that are about a secret, not the secret.
 */
const ordinaryPayload = (): fc.Arbitrary<Record<string, unknown>> =>
	fc
		.record({
			id: fc.stringMatching(/^(?:ord|cus|in|pi)_[A-Za-z0-9]{8,24}$/),
			uuid: fc.uuid(),
			sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
			md5: fc.stringMatching(/^[0-9a-f]{32}$/),
			image: fc.uint8Array({ minLength: 100, maxLength: 30_000 }),
			createdAt: fc.date({ noInvalidDate: true, min: new Date(0) }).map((d) => d.toISOString()),
			count: fc.integer(),
		})
		.map(({ image, ...rest }) => ({
			...rest,
			image: `data:image/png;base64,${Buffer.from(image).toString('base64')}`,
			token_type: 'bearer',
			expires_in: 3600,
			usage: { prompt_tokens: rest.count, total_tokens: rest.count },
			url: `https://api.example.com/v1/orders/${rest.id}?page=2`,
		}));

/** A payload: JSON of any shape, hostile text, deep nesting, huge sizes, a planted canary. */
const payload = (canary: string): fc.Arbitrary<unknown> =>
	fc.oneof(
		{ weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
		{
			weight: 3,
			arbitrary: fc.dictionary(hostileText(), fc.oneof(hostileText(), plantedSecret(canary)), {
				maxKeys: 5,
			}),
		},
		{ weight: 2, arbitrary: plantedSecret(canary) },
		{
			weight: 1,
			arbitrary: fc.integer({ min: 100, max: 3_000 }).map((d) => deep(d, { password: canary })),
		},
		{
			weight: 1,
			arbitrary: fc.integer({ min: 1, max: 4 }).map((mb) => ({ blob: 'x'.repeat(mb * 250_000) })),
		},
		{ weight: 1, arbitrary: bigSeparatedText().map((text) => ({ export: text, note: text })) },
		{
			weight: 1,
			arbitrary: fc.constant(Array.from({ length: 5_000 }, (_, i) => ({ i, token: canary }))),
		},
		{ weight: 1, arbitrary: anyType() },
	);

/** Free text that may carry a canary in a secret form. */
const textMaybeSecret = (canary: string): fc.Arbitrary<unknown> =>
	fc.oneof(
		{ weight: 3, arbitrary: hostileText() },
		{
			weight: 1,
			arbitrary: plantedSecret(canary).filter((v): v is string => typeof v === 'string'),
		},
		{ weight: 1, arbitrary: anyType() },
	);

// ---------------------------------------------------------------------------------------------
// The operations

type Op = { op: string; [field: string]: unknown };

const STATUSES = [
	'new',
	'being_fixed',
	'replay_requested',
	'replayed',
	'resolved',
	'abandoned',
	'held',
];

/** The operations, by name, in the order `operations` lists them. */
export const OPERATIONS = [
	'park',
	'get',
	'getByKey',
	'list',
	'status',
	'stats',
	'purge',
	'pause',
	'beat',
	'checkHeartbeats',
	'console',
	'metrics',
	'compensate',
	'trace',
	'alert',
	'mask',
	'write',
	'claim',
] as const;

function operations(
	canary: string,
	only: readonly string[] | undefined,
	strictWrites: boolean,
): fc.Arbitrary<Op> {
	// Keys, event IDs and target answers as hostile as everything else, or (until the write and
	// claim engines handle them) without NUL, unpaired surrogates and over-long keys.
	const writeText = strictWrites ? hostileText() : fc.string({ maxLength: 40 });
	const writeKey = strictWrites
		? fc.oneof(hostileText(), fc.string({ minLength: 1, maxLength: 30 }))
		: fc.string({ minLength: 1, maxLength: 30 });
	const id = fc.oneof(
		{ weight: 3, arbitrary: fc.integer({ min: 1, max: 60 }).map(String) },
		{ weight: 1, arbitrary: anyType() },
	);
	const parkRequest = fc.record(
		{
			workflowId: param(fc.constantFrom('wf-a', 'wf-b', 'wf <b>')),
			workflowName: param(hostileText()),
			executionId: param(hostileText()),
			step: param(fc.oneof(fc.constantFrom('Upsert', 'Enrich'), hostileText())),
			itemIndex: param(fc.nat(50)),
			idempotencyKey: param(fc.oneof(fc.constantFrom('k1', 'k2', 'k3'), hostileText())),
			runLink: param(
				fc.oneof(fc.constant('https://n8n.example.com/workflow/1/executions/2'), hostileText()),
			),
			integration: param(fc.constantFrom('crm', 'erp', '<crm>')),
			errorClass: param(fc.constantFrom('permanent', 'exhausted', 'invalid')),
			errorMessage: textMaybeSecret(canary),
			errorStatus: param(fc.integer({ min: 100, max: 599 })),
			attempts: param(fc.nat(10)),
			alreadyHappened: textMaybeSecret(canary),
			impact: textMaybeSecret(canary),
			owner: param(hostileText()),
			severity: param(fc.constantFrom('page', 'normal')),
			status: fc.option(param(fc.constantFrom(...STATUSES)), { nil: undefined }),
			payload: payload(canary),
			retryAfter: fc.option(fc.oneof(fc.date(), fc.constant(new Date(Number.NaN))), {
				nil: undefined,
			}),
			retentionDays: fc.option(param(fc.integer({ min: 1, max: 3650 })), { nil: undefined }),
		},
		{ requiredKeys: ['workflowId', 'step', 'errorClass', 'payload'] },
	);
	const basic = (user: string, password: string) =>
		`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
	const consoleRequest = fc.record({
		user: fc.oneof(fc.constantFrom('maria', 'ops <b>'), hostileText()),
		password: fc.oneof(fc.constant(canary), hostileText()),
		validToken: fc.boolean(),
		headers: fc.dictionary(hostileText(), anyType(), { maxKeys: 3 }),
		query: fc.oneof(
			fc.record(
				{
					view: fc.constantFrom('list', 'item', 'controls', 'stats', 'trace', 'nonsense'),
					q: param(fc.oneof(hostileText(), textMaybeSecret(canary))),
					id: id,
					status: param(fc.constantFrom('open', 'all', ...STATUSES)),
					workflow: param(hostileText()),
					step: param(hostileText()),
					reason: param(hostileText()),
					age: param(hostileNumber().map(String)),
					search: param(hostileText()),
					done: param(fc.constantFrom('replay', 'resolve', 'pause', 'resume', 'batch_replay')),
					n: param(hostileNumber().map(String)),
					done_id: param(hostileText()),
				},
				{ requiredKeys: ['view'] },
			),
			anyType(),
		),
		body: fc.oneof(
			fc.record(
				{
					action: param(
						fc.constantFrom(
							'replay',
							'being_fixed',
							'resolve',
							'abandon',
							'batch_replay',
							'pause',
							'resume',
							'<b>',
						),
					),
					id: id,
					note: textMaybeSecret(canary),
					scope: param(fc.constantFrom('integration', 'workflow')),
					name: param(fc.oneof(fc.constantFrom('crm', 'erp'), hostileText())),
					status: param(fc.constantFrom('open', 'new', 'being_fixed', 'held')),
					step: param(hostileText()),
				},
				{ requiredKeys: ['action'] },
			),
			anyType(),
		),
		options: fc.record({
			operatorHeader: fc.option(param(hostileText()), { nil: undefined }),
			title: fc.option(param(hostileText()), { nil: undefined }),
			days: fc.option(param(fc.integer({ min: 1, max: 366 })), { nil: undefined }),
			teams: fc.option(
				param(
					fc.oneof(
						hostileText(),
						fc.constant('{"maria": ["sales-ops"], "ops <b>": ["*"]}'),
						fc.dictionary(hostileText(), fc.array(hostileText(), { maxLength: 2 }), {
							maxKeys: 2,
						}),
					),
				),
				{ nil: undefined },
			),
		}),
	});
	const all = [
		fc.record({
			op: fc.constant('park'),
			requests: fc.array(parkRequest, { minLength: 1, maxLength: 4 }),
			maskFields: fc.option(fc.array(param(hostileText()), { maxLength: 3 }), { nil: undefined }),
		}),
		fc.record({ op: fc.constant('get'), ids: fc.array(id, { maxLength: 4 }) }),
		fc.record({
			op: fc.constant('getByKey'),
			keys: fc.array(param(hostileText()), { maxLength: 3 }),
		}),
		fc.record({
			op: fc.constant('list'),
			filter: fc.record(
				{
					statuses: fc.option(fc.array(param(fc.constantFrom(...STATUSES)), { maxLength: 3 }), {
						nil: undefined,
					}),
					workflowId: param(hostileText()),
					step: param(hostileText()),
					errorClass: param(hostileText()),
					owner: param(hostileText()),
					integration: param(hostileText()),
					olderThanMinutes: param(hostileNumber()),
					search: param(hostileText()),
					limit: param(fc.integer({ min: 1, max: 500 })),
				},
				{ requiredKeys: [] },
			),
		}),
		fc.record({
			op: fc.constant('status'),
			ids: fc.array(id, { minLength: 1, maxLength: 3 }),
			to: param(fc.constantFrom(...STATUSES)),
			actor: param(fc.oneof(fc.constant('ops@example.com'), hostileText())),
			reason: textMaybeSecret(canary),
		}),
		fc.record({
			op: fc.constant('stats'),
			days: param(fc.integer({ min: 1, max: 90 })),
			workflowId: param(hostileText()),
		}),
		fc.record({ op: fc.constant('purge') }),
		fc.record({
			op: fc.constantFrom('pause', 'resume'),
			scope: param(fc.constantFrom('integration', 'workflow')),
			name: param(fc.oneof(fc.constantFrom('crm', 'erp'), hostileText())),
			actor: param(fc.oneof(fc.constant('maria'), hostileText())),
			reason: textMaybeSecret(canary),
		}),
		fc.record({
			op: fc.constant('beat'),
			name: param(fc.oneof(fc.constantFrom('nightly', 'hourly'), hostileText())),
			periodSeconds: fc.option(param(fc.integer({ min: 1, max: 86_400 })), { nil: undefined }),
			cron: fc.option(
				param(
					fc.oneof(
						fc.constantFrom(
							'0 6 * * *',
							'*/5 * * * *',
							'0 0 30 2 *',
							'0 0 29 2 *',
							'61 * * * *',
							'* * *',
						),
						hostileText(),
					),
				),
				{ nil: undefined },
			),
			graceSeconds: fc.option(param(fc.integer({ min: 0, max: 3600 })), { nil: undefined }),
		}),
		fc.record({
			op: fc.constant('checkHeartbeats'),
			names: fc.option(fc.array(param(hostileText()), { maxLength: 2 }), { nil: undefined }),
		}),
		fc.record({ op: fc.constant('console'), request: consoleRequest }).map((o) => {
			const r = o.request;
			return { ...o, authorization: basic(String(r.user), String(r.password)) };
		}),
		fc.record({ op: fc.constant('metrics') }),
		fc.record({
			op: fc.constant('compensate'),
			id: id,
			status: fc.oneof(
				fc.constantFrom(200, 204, 404, 409, 500, 503),
				fc.integer({ min: 100, max: 599 }),
			),
			lost: fc.boolean(),
		}),
		fc.record({
			op: fc.constant('trace'),
			query: param(fc.oneof(hostileText(), textMaybeSecret(canary))),
			limit: fc.option(param(hostileNumber()), { nil: undefined }),
		}),
		fc.record({
			op: fc.constant('alert'),
			input: fc.oneof(
				payload(canary),
				fc.record({
					message: textMaybeSecret(canary),
					impact: hostileText(),
					workflowName: hostileText(),
					_deadLetter: anyType(),
				}),
			),
		}),
		fc.record({
			op: fc.constant('mask'),
			value: payload(canary),
			ordinary: ordinaryPayload(),
			text: textMaybeSecret(canary),
			extra: fc.array(param(hostileText()), { maxLength: 2 }),
		}),
		fc.record({
			op: fc.constant('write'),
			keys: fc.array(fc.oneof(fc.constantFrom('w1', 'w2', 'w3'), writeKey), {
				minLength: 1,
				maxLength: 3,
			}),
			payload: payload(canary),
			// Steps of one item (one reference) that declare how to reverse them, for Compensate.
			itemRef: fc.option(fc.constantFrom('item-1', 'item-2'), { nil: undefined }),
			compensation: fc.option(
				fc.oneof(
					fc.record({
						kind: fc.constant('request' as const),
						method: fc.constantFrom('DELETE', 'POST', 'GET <b>'),
						url: fc.oneof(
							fc.constant('https://crm.example.com/contacts/{{ $json.id }}'),
							fc.constant('https://crm.example.com/undo/{{ $json.a[0].b }}'),
							hostileText(),
						),
						body: fc.option(fc.oneof(fc.constant('{"id": "{{ $json.id }}"}'), hostileText()), {
							nil: undefined,
						}),
					}),
					fc.record({ kind: fc.constant('manual' as const), plan: textMaybeSecret(canary) }),
				),
				{ nil: undefined },
			),
			answers: fc.array(
				fc.oneof(
					fc.record({
						kind: fc.constant('response' as const),
						status: fc.oneof(
							fc.constantFrom(200, 201, 400, 409, 422, 429, 500, 503),
							fc.integer({ min: 100, max: 599 }),
						),
						retryAfter: fc.option(
							fc.oneof(
								fc.constantFrom('0', '1', '-1', '1e9', 'Wed, 21 Oct 2015 07:28:00 GMT'),
								hostileText(),
							),
							{ nil: undefined },
						),
						body: fc.oneof(fc.jsonValue({ maxDepth: 3 }), writeText),
					}),
					fc.record({
						kind: fc.constantFrom('not_sent' as const, 'lost' as const),
						code: fc.constantFrom('ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET'),
						message: writeText,
					}),
				),
				{ minLength: 1, maxLength: 4 },
			),
		}),
		fc.record({
			op: fc.constant('claim'),
			consumer: fc.oneof(fc.constantFrom('c1', 'c2'), writeKey),
			events: fc.array(
				fc.record({
					eventId: fc.oneof(fc.constantFrom('e1', 'e2', 'e3'), writeKey),
					entityKey: fc.option(fc.constantFrom('lead-1', 'lead-2'), { nil: undefined }),
					version: fc.option(
						fc.oneof(
							fc.integer({ min: 0, max: 1000 }),
							fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
						),
						{ nil: undefined },
					),
				}),
				{ minLength: 1, maxLength: 4 },
			),
			mode: fc.constantFrom('doneAtClaim' as const, 'leaseUntilComplete' as const),
		}),
	] as fc.Arbitrary<Op>[];
	const chosen = all.filter((_arb, i) => !only || only.includes(OPERATIONS[i]));
	if (chosen.length === 0) throw new Error(`no operation named ${only?.join(', ')}`);
	return fc.oneof(...chosen);
}

// ---------------------------------------------------------------------------------------------
// Running one input

/**
 * The markup the console writes itself. Escaped text cannot contain `<`, so every tag on a page
 * is the console's: a tag of another name, an event-handler attribute or a `javascript:` link
 * (attribute values set aside, where escaped text may say anything) is fuzzed text that got
 * through unescaped.
 */
const CONSOLE_TAGS = new Set(
	'!doctype html head meta title style body header strong nav a span b main div h1 h2 p table thead tbody tr th td form input label select option button textarea dl dt dd pre code svg line text rect br ol li'.split(
		' ',
	),
);

function checkEscaped(body: string, where: string): void {
	const fail = (why: string, at: number): never => {
		throw new FuzzFinding({
			kind: 'unescaped',
			detail: `${where}: ${why} at ${at}: …${body.slice(Math.max(0, at - 80), at + 80)}…`,
		});
	};
	for (const match of body.matchAll(/<\/?([!a-zA-Z][^\s<>/]*)([^<>]*)>/g)) {
		const name = match[1].toLowerCase();
		if (!CONSOLE_TAGS.has(name)) fail(`a <${name}> tag`, match.index);
		const attributes = match[2];
		if ((attributes.match(/"/g)?.length ?? 0) % 2 !== 0)
			fail('an attribute quote out of balance', match.index);
		const outsideValues = attributes.replace(/"[^"]*"/g, '""');
		if (/(^|\s)on[a-z]+\s*=/i.test(outsideValues)) fail('an event-handler attribute', match.index);
		if (/(^|\s)(href|src|action)\s*=\s*"\s*javascript:/i.test(attributes))
			fail('a javascript: link', match.index);
	}
	const stray = body.search(/<(?![!a-zA-Z/])/);
	if (stray >= 0) fail('a stray <', stray);
}

function checkNoCanary(canary: string, value: unknown, where: string): void {
	let text: string;
	try {
		text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
	} catch {
		return;
	}
	const at = text.indexOf(canary);
	if (at >= 0)
		throw new FuzzFinding({
			kind: 'leak',
			detail: `${where}: …${text.slice(Math.max(0, at - 120), at + 40)}…`,
		});
}

async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	try {
		return await Promise.race([
			work,
			new Promise<never>((_, reject) => {
				timer = setTimeout(
					() =>
						reject(
							new FuzzFinding({
								kind: 'crash',
								detail: `${what} did not finish within ${PER_INPUT_TIMEOUT_MS / 1000} s`,
							}),
						),
					PER_INPUT_TIMEOUT_MS,
				);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
}

/** Runs one engine call: a result, or an error of the engine's own hierarchy; anything else is a crash. */
async function engine<T>(what: string, work: () => Promise<T> | T): Promise<T | undefined> {
	try {
		return await withTimeout(Promise.resolve().then(work), what);
	} catch (error) {
		if (error instanceof FuzzFinding) throw error;
		if (isReliabilityError(error) && typeof error.message === 'string' && error.message)
			return undefined;
		const e = error as { name?: string; message?: string; code?: string; stack?: string };
		throw new FuzzFinding({
			kind: 'crash',
			detail: `${what} threw ${e?.name ?? typeof error}${e?.code ? ` (SQLSTATE ${e.code})` : ''}: ${String(e?.message ?? error).slice(0, 300)}\n${String(
				e?.stack ?? '',
			)
				.split('\n')
				.slice(1, 6)
				.join('\n')}`,
		});
	}
}

interface Run {
	store: Store;
	canary: string;
	writerCanaries: boolean;
	secret: Buffer;
	executions: number;
}

async function runOne(run: Run, op: Op): Promise<void> {
	const { store, canary } = run;
	const as = <T>(value: unknown): T => value as T;
	switch (op.op) {
		case 'park': {
			const results = await engine('parkItems', () =>
				parkItems(store, as(op.requests), { maskFields: as(op.maskFields) }),
			);
			if (results) {
				// Each parked item's page renders escaped and masked.
				for (const r of results.filter((o) => !o.refused).slice(0, 2)) {
					const page = await renderPage(run, { view: 'item', id: r.id });
					if (page) checkNoCanary(canary, page, `item page of ${r.id}`);
				}
			}
			return;
		}
		case 'get': {
			const records = await engine('getDeadLetters', () => getDeadLetters(store, as(op.ids)));
			checkNoCanary(canary, records, 'getDeadLetters');
			return;
		}
		case 'getByKey': {
			const records = await engine('getDeadLettersByKey', () =>
				getDeadLettersByKey(store, as(op.keys)),
			);
			checkNoCanary(canary, records, 'getDeadLettersByKey');
			return;
		}
		case 'list': {
			const rows = await engine('listDeadLetters', () => listDeadLetters(store, as(op.filter)));
			checkNoCanary(canary, rows, 'listDeadLetters');
			return;
		}
		case 'status': {
			const ids = op.ids as unknown[];
			if (ids.length === 1)
				await engine('updateDeadLetterStatus', () =>
					updateDeadLetterStatus(
						store,
						as({ id: ids[0], to: op.to, actor: op.actor, reason: op.reason }),
					),
				);
			else
				await engine('updateDeadLetterStatuses', () =>
					updateDeadLetterStatuses(
						store,
						as(ids),
						as({ to: op.to, actor: op.actor, reason: op.reason }),
					),
				);
			return;
		}
		case 'stats': {
			const stats = await engine('deadLetterStats', () =>
				deadLetterStats(store, as({ days: op.days, workflowId: op.workflowId })),
			);
			checkNoCanary(canary, stats, 'deadLetterStats');
			return;
		}
		case 'purge':
			await engine('purgeDeadLetters', () => purgeDeadLetters(store));
			return;
		case 'pause':
		case 'resume': {
			const call = op.op === 'pause' ? pause : resume;
			const state = await engine(op.op, () =>
				call(store, as(op.scope), as(op.name), as(op.actor), as(op.reason)),
			);
			checkNoCanary(canary, state, op.op);
			const all = await engine('listPauses', () => listPauses(store));
			checkNoCanary(canary, all, 'listPauses');
			return;
		}
		case 'beat':
			await engine('beat', () =>
				beat(
					store,
					as({
						name: op.name,
						periodSeconds: op.periodSeconds,
						cron: op.cron,
						graceSeconds: op.graceSeconds,
					}),
				),
			);
			return;
		case 'checkHeartbeats':
			await engine('checkHeartbeats', () => checkHeartbeats(store, as(op.names)));
			return;
		case 'console': {
			const r = op.request as Record<string, unknown>;
			const headers = {
				...(r.headers as Record<string, unknown>),
				authorization: op.authorization,
			};
			const body =
				r.body !== null && typeof r.body === 'object' && !Array.isArray(r.body)
					? {
							...(r.body as object),
							...(r.validToken ? { token: formToken(run.secret, String(r.user).trim()) } : {}),
						}
					: r.body;
			const response = await engine('handleConsoleRequest', () =>
				handleConsoleRequest(store, as({ headers, query: r.query, body }), as(r.options)),
			);
			if (response) {
				checkEscaped(response.body, 'console response');
				checkNoCanary(canary, response, 'console response');
				if (response.headers['x-frame-options'] !== 'DENY')
					throw new FuzzFinding({
						kind: 'unescaped',
						detail: 'a console response without X-Frame-Options: DENY',
					});
			}
			return;
		}
		case 'compensate': {
			// Reverses a parked item's steps with a sender that answers the drawn status (or loses
			// the answer); the store's audit chain is read back after every input.
			const result = await engine('compensateDeadLetter', () =>
				compensateDeadLetter(
					store,
					{
						id: as(op.id),
						actor: 'fuzz',
						executionId: `fuzz-${run.executions++}`,
						policy: {
							...DEFAULT_POLICY,
							maxAttempts: 2,
							baseDelayMs: 1,
							maxDelayMs: 2,
							deadlineMs: 500,
						},
					},
					{
						send: async (request): Promise<SendResult> =>
							op.lost
								? { kind: 'lost', code: 'ECONNRESET', message: `lost ${request.url}` }
								: {
										kind: 'response',
										answer: { status: op.status as number, headers: {}, body: { id: 'x' } },
									},
					},
				),
			);
			checkNoCanary(canary, result, 'compensateDeadLetter');
			return;
		}
		case 'trace': {
			// Where is item X: any text finds, or is refused with the engine's own error.
			const result = await engine('traceItem', () =>
				traceItem(store, as(op.query), { limit: as(op.limit) }),
			);
			checkNoCanary(canary, result, 'traceItem');
			return;
		}
		case 'metrics': {
			const text = await engine('prometheusMetrics', () => prometheusMetrics(store));
			if (text !== undefined) {
				checkNoCanary(canary, text, 'metrics');
				try {
					parsePrometheusTextFormat(text);
				} catch (error) {
					throw new FuzzFinding({
						kind: 'crash',
						detail: `metrics do not parse: ${String(error)}`,
					});
				}
			}
			return;
		}
		case 'alert': {
			const alert = await engine('composeAlert', () => composeAlert(op.input));
			checkNoCanary(canary, alert, 'composeAlert');
			return;
		}
		case 'mask': {
			const masked = await engine('maskValue', () => maskValue(op.value, as(op.extra)));
			checkNoCanary(canary, masked, 'maskValue');
			const text = typeof op.text === 'string' ? op.text : '';
			checkNoCanary(canary, await engine('maskText', () => maskText(text)), 'maskText');
			// The false-positive side: an ordinary payload comes back as it was.
			const ordinary = JSON.stringify(maskValue(op.ordinary));
			if (ordinary !== JSON.stringify(op.ordinary))
				throw new FuzzFinding({
					kind: 'overmasked',
					detail: `an ordinary payload was masked: ${ordinary.slice(0, 400)}`,
				});
			return;
		}
		case 'write':
			await writeThroughFakeTarget(run, op);
			return;
		case 'claim': {
			const events = op.events as Array<{ eventId: string; entityKey?: string; version?: number }>;
			await engine('claimEvents', () =>
				claimEvents(
					store,
					{
						consumer: as(op.consumer),
						executionId: `fuzz-${run.executions++}`,
						mode: as(op.mode),
						leaseSeconds: 60,
						retentionDays: 1,
					},
					events.map((e, index) => ({
						index,
						...e,
						version: e.version === undefined ? undefined : toVersion(e.version),
					})),
				),
			);
			return;
		}
		default:
			throw new Error(`unknown op ${op.op}`);
	}
}

/**
 * The write engine with a local fake target that answers from the drawn list (the last answer
 * repeats). Kept thin: the writer's interface is being reworked.
 */
async function writeThroughFakeTarget(run: Run, op: Op): Promise<void> {
	const answers = op.answers as Array<Record<string, unknown>>;
	let clock = Date.now();
	let sent = 0;
	const secretBody = (body: unknown): unknown =>
		run.writerCanaries ? { message: `refused: Authorization: Bearer ${run.canary}`, body } : body;
	const send = async (): Promise<SendResult> => {
		const answer = answers[Math.min(sent++, answers.length - 1)];
		if (answer.kind === 'response')
			return {
				kind: 'response',
				answer: {
					status: answer.status as number,
					headers:
						answer.retryAfter === undefined ? {} : { 'retry-after': answer.retryAfter as string },
					body: secretBody(answer.body),
				},
			};
		return {
			kind: answer.kind as 'not_sent' | 'lost',
			code: answer.code as string,
			message: String(answer.message),
		};
	};
	const keys = op.keys as string[];
	await engine('runWrites', () =>
		runWrites(
			run.store,
			{
				workflowId: 'wf-fuzz',
				executionId: `fuzz-${run.executions++}`,
				node: 'Write',
				retentionDays: 1,
				policy: { ...DEFAULT_POLICY, baseDelayMs: 10, maxDelayMs: 50, deadlineMs: 2_000 },
				onUnknown: 'retry',
				concurrency: 2,
				maxSavedBodyChars: 10_000,
				park: true,
			},
			keys.map((key, index) => ({
				index,
				scope: 'fuzz',
				key,
				fingerprint: `fp-${index}`,
				payload: op.payload,
				itemRef: op.itemRef as string | undefined,
				compensation: op.compensation as Compensation | undefined,
			})),
			{
				send,
				sleep: async (ms) => {
					clock += ms;
				},
				now: () => clock,
				random: () => 0.5,
			},
		),
	);
}

async function renderPage(run: Run, query: Record<string, string>): Promise<string | undefined> {
	const response = await engine('handleConsoleRequest', () =>
		handleConsoleRequest(run.store, {
			headers: { authorization: `Basic ${Buffer.from('maria:pw').toString('base64')}` },
			query,
		}),
	);
	if (!response) return undefined;
	checkEscaped(response.body, `console page ${JSON.stringify(query)}`);
	return response.body;
}

// ---------------------------------------------------------------------------------------------
// Reading the store back

async function checkStore(run: Run, admin: Client): Promise<void> {
	const schema = run.store.schema;
	const q = async <R>(sql: string): Promise<R[]> => (await admin.query(sql)).rows as R[];
	const problem = (detail: string): never => {
		throw new FuzzFinding({ kind: 'invariant', detail });
	};
	// Every dead letter has its audit trail, its last event says its status, and the chain of
	// events is unbroken (each from = the previous to).
	const broken = await q<{ id: string; status: string; last: string | null; events: number }>(`
		SELECT d.id, d.status, (SELECT e.to_status FROM "${schema}".dead_letter_events e WHERE e.dead_letter_id = d.id ORDER BY e.id DESC LIMIT 1) AS last,
		       (SELECT count(*)::int FROM "${schema}".dead_letter_events e WHERE e.dead_letter_id = d.id) AS events
		FROM "${schema}".dead_letters d`);
	for (const row of broken)
		if (row.events === 0 || row.last !== row.status)
			problem(
				`dead letter ${row.id} is ${row.status} but its audit trail ends at ${row.last} (${row.events} events)`,
			);
	const chain = await q<{ id: string }>(`
		SELECT e.id FROM "${schema}".dead_letter_events e
		JOIN LATERAL (SELECT p.to_status FROM "${schema}".dead_letter_events p WHERE p.dead_letter_id = e.dead_letter_id AND p.id < e.id ORDER BY p.id DESC LIMIT 1) prev ON true
		WHERE e.from_status IS DISTINCT FROM prev.to_status`);
	if (chain.length)
		problem(
			`audit events ${chain.map((c) => c.id).join(', ')} do not start where the previous one ended`,
		);
	const closed = await q<{ id: string }>(`
		SELECT id FROM "${schema}".dead_letters
		WHERE (closed_at IS NOT NULL) <> (status <> ALL ('{${OPEN_STATUSES.join(',')}}'::text[])) OR failure_count < 1`);
	if (closed.length)
		problem(
			`dead letters ${closed.map((c) => c.id).join(', ')} have closed_at out of step with their status`,
		);
	// Each pause row says what its latest event says.
	const pauses = await q<{ name: string }>(`
		SELECT p.name FROM "${schema}".pauses p
		WHERE ROW(p.paused, p.changed_by, coalesce(p.reason, '')) IS DISTINCT FROM (
			SELECT ROW(e.paused, e.actor, coalesce(e.reason, '')) FROM "${schema}".pause_events e
			WHERE e.scope = p.scope AND e.name = p.name ORDER BY e.id DESC LIMIT 1)`);
	if (pauses.length)
		problem(
			`pauses ${pauses.map((p) => JSON.stringify(p.name)).join(', ')} disagree with their log`,
		);
	// Every heartbeat can be listed (a bad row is 'invalid', never an error).
	const heartbeats = await engine('listHeartbeats', () => listHeartbeats(run.store));
	const rows = await q<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".heartbeats`);
	if (heartbeats && heartbeats.length !== rows[0].n) problem('listHeartbeats left rows out');
	// No canary in any column of any table.
	const tables = await q<{ tablename: string }>(
		`SELECT tablename FROM pg_tables WHERE schemaname = '${schema}'`,
	);
	for (const { tablename } of tables) {
		const found = await q<{ row: string }>(
			`SELECT t::text AS row FROM "${schema}"."${tablename}" t WHERE strpos(t::text, '${run.canary}') > 0 LIMIT 1`,
		);
		if (found.length)
			throw new FuzzFinding({
				kind: 'leak',
				detail: `table ${tablename}: ${found[0].row.slice(0, 400)}`,
			});
	}
}

// ---------------------------------------------------------------------------------------------

const cut = (value: unknown): unknown => {
	try {
		return JSON.parse(
			JSON.stringify(value, (_key, v: unknown) => {
				if (typeof v === 'string' && v.length > 200)
					return `${v.slice(0, 200)}… (${v.length} chars)`;
				if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
				if (v === undefined) return '(undefined)';
				return v;
			}),
		);
	} catch {
		return '(too deep to print)';
	}
};

/** A store in a schema of its own, the admin connection that reads it back, and the run's state. */
async function openRun(
	settings: PgSettings,
	canary: string,
	writerCanaries: boolean,
): Promise<{ run: Run; admin: Client; close: () => Promise<void> }> {
	const schema = `fuzz_${randomBytes(4).toString('hex')}`;
	const store = new Store({ ...settings, ssl: 'disable', schema, maxConnections: 5 });
	const admin = new Client(clientConfig(settings));
	await admin.connect();
	const close = async () => {
		await store.close().catch(() => undefined);
		await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
		await admin.end().catch(() => undefined);
	};
	try {
		await store.ready();
		const secret = await consoleSecret(store);
		return { run: { store, canary, writerCanaries, secret, executions: 0 }, admin, close };
	} catch (error) {
		await close();
		throw error;
	}
}

const DEFAULT_TIME_BUDGET = { baseMs: BUDGET_BASE_MS, msPer100Kb: BUDGET_MS_PER_100_KB };

/** One input through the engine, within its time budget. */
async function runWithinBudget(
	run: Run,
	op: Op,
	{ baseMs, msPer100Kb } = DEFAULT_TIME_BUDGET,
): Promise<void> {
	const budget = baseMs + (sizeOf(op) / 100_000) * msPer100Kb;
	const started = performance.now();
	await runOne(run, op);
	const took = performance.now() - started;
	if (took > budget)
		throw new FuzzFinding({
			kind: 'slow',
			detail: `${op.op} of ${sizeOf(op)} characters took ${Math.round(took)} ms, over its budget of ${Math.round(budget)} ms`,
		});
}

const findingOf = (error: unknown): FuzzFailure =>
	error instanceof FuzzFinding
		? error.finding
		: {
				kind: 'crash',
				detail: String((error as Error | undefined)?.stack ?? error),
			};

export async function runFuzz(options: FuzzOptions): Promise<FuzzResult> {
	const say = options.log ?? ((line: string) => void process.stdout.write(`${line}\n`));
	const seed = options.seed ?? randomBytes(4).readInt32LE(0);
	const canary = `fzCanary${randomBytes(6).toString('hex')}`;
	const result: FuzzResult = {
		inputs: options.inputs,
		seed,
		crashes: 0,
		unescaped: 0,
		leaks: 0,
		slow: 0,
		overmasked: 0,
	};
	const { run, admin, close } = await openRun(
		options.postgres ?? pgSettingsFromEnv(),
		canary,
		options.writerCanaries ?? true,
	);
	try {
		let count = 0;
		// Set at the first failure: from then on fast-check only shrinks, within its budget.
		const shrink = { started: undefined as number | undefined, steps: 0, capped: false };
		const shrinkBudget = options.shrinkBudget ?? { ms: SHRINK_BUDGET_MS, steps: SHRINK_MAX_STEPS };
		const property = fc.asyncProperty(
			operations(canary, options.only, options.strictWrites ?? true),
			async (op) => {
				if (shrink.started !== undefined) {
					if (
						shrink.capped ||
						++shrink.steps > shrinkBudget.steps ||
						performance.now() - shrink.started > shrinkBudget.ms
					) {
						shrink.capped = true;
						return;
					}
				}
				try {
					await runWithinBudget(run, op, options.timeBudget);
					// The store read back now and then, and at the end.
					if (++count % 50 === 0) await checkStore(run, admin);
				} catch (error) {
					shrink.started ??= performance.now();
					throw error;
				}
			},
		);
		say(`fuzz: ${options.inputs} inputs, seed ${seed}, schema ${run.store.schema}`);
		const started = Date.now();
		const details = await fc.check(property, {
			numRuns: options.inputs,
			seed,
			endOnFailure: false,
		});
		say(`  ran ${details.numRuns} inputs in ${Math.round((Date.now() - started) / 100) / 10} s`);
		if (shrink.started !== undefined)
			say(
				`  shrinking ${shrink.capped ? 'stopped at its budget' : 'ended'} after ${Math.min(shrink.steps, shrinkBudget.steps)} variants in ${Math.round((performance.now() - shrink.started) / 100) / 10} s`,
			);
		result.shrinkCapped = shrink.capped;
		let failure = details.failed ? details.errorInstance : undefined;
		if (!failure) {
			try {
				await checkStore(run, admin);
			} catch (error) {
				failure = error;
			}
		}
		if (failure) {
			const finding = findingOf(failure);
			if (finding.kind === 'crash' || finding.kind === 'invariant') result.crashes++;
			if (finding.kind === 'unescaped') result.unescaped++;
			if (finding.kind === 'leak') result.leaks++;
			if (finding.kind === 'slow') result.slow++;
			if (finding.kind === 'overmasked') result.overmasked++;
			const op = details.counterexample?.[0];
			result.failure = {
				input: op ? JSON.stringify(cut(op), null, 1) : '(the store read back after the run)',
				path: details.counterexamplePath ?? undefined,
				reason: `${finding.kind}: ${finding.detail}`,
			};
			say(
				`FAILED after ${details.numRuns} inputs (seed ${seed}${details.counterexamplePath ? `, path ${details.counterexamplePath}` : ''}):`,
			);
			say(`  ${result.failure.reason}`);
			say(`  shrunk input: ${result.failure.input}`);
			say(`  run it again: npm run check:fuzz -- --inputs ${options.inputs} --seed ${seed}`);
			if (options.regressionDir && op) {
				result.regressionFile = keepRegression(options.regressionDir, {
					seed,
					...result.failure,
					canary,
					op,
				});
				say(`  kept as ${result.regressionFile} (npm test replays it)`);
			} else if (options.regressionDir)
				say('  nothing kept: the store broke over the run, not at one input');
		}
		return result;
	} finally {
		await close();
	}
}

// ---------------------------------------------------------------------------------------------
// Kept inputs

/**
 * A failing input as JSON that reads back as the same input: undefined, NaN, infinities, -0
 * and dates (valid or not), which JSON has no word for, are written as `{"$fuzz": …}`.
 */
function encodeInput(op: Op): unknown {
	return JSON.parse(
		JSON.stringify(op, function (this: Record<string, unknown>, key: string, value: unknown) {
			const raw = this[key];
			if (raw instanceof Date)
				return { $fuzz: 'date', iso: Number.isNaN(raw.getTime()) ? null : raw.toISOString() };
			if (raw === undefined) return { $fuzz: 'undefined' };
			if (typeof raw === 'number' && (!Number.isFinite(raw) || Object.is(raw, -0)))
				return { $fuzz: 'number', value: Object.is(raw, -0) ? '-0' : String(raw) };
			return value;
		}),
	);
}

function decodeTag(value: unknown): { decoded: unknown } | undefined {
	if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
	const tag = value as { $fuzz?: unknown; iso?: string | null; value?: string };
	if (typeof tag.$fuzz !== 'string') return undefined;
	if (tag.$fuzz === 'undefined') return { decoded: undefined };
	if (tag.$fuzz === 'date') return { decoded: new Date(tag.iso ?? Number.NaN) };
	if (tag.$fuzz === 'number') return { decoded: tag.value === '-0' ? -0 : Number(tag.value) };
	return undefined;
}

/** The input encodeInput wrote, as it was (a walk, not recursion: inputs nest thousands deep). */
function decodeInput(encoded: unknown): Op {
	const root = { value: encoded } as Record<string, unknown>;
	const pending: Array<Record<string, unknown>> = [root];
	while (pending.length) {
		const holder = pending.pop()!;
		for (const key of Object.keys(holder)) {
			const tagged = decodeTag(holder[key]);
			if (tagged) holder[key] = tagged.decoded;
			else if (holder[key] !== null && typeof holder[key] === 'object')
				pending.push(holder[key] as Record<string, unknown>);
		}
	}
	return root.value as Op;
}

/** What a kept file holds: the seed and path, the reason, and the input with its canary. */
export interface KeptInput {
	seed: number;
	path?: string;
	reason: string;
	/** The input, readable (long strings cut). */
	input: string;
	canary: string;
	/** The input as encodeInput wrote it, to replay. */
	replay: unknown;
}

/** Keeps a failing input, with its seed and path, to be replayed by `npm test` after the fix. */
function keepRegression(dir: string, kept: Omit<KeptInput, 'replay'> & { op: Op }): string {
	mkdirSync(dir, { recursive: true });
	const { op, ...rest } = kept;
	const file = join(dir, `fuzz-${kept.seed}-${Date.now()}.json`);
	// Written as is (.prettierignore leaves the directory alone): the input must read back exact.
	writeFileSync(
		file,
		`${JSON.stringify({ ...rest, replay: encodeInput(op) } satisfies KeptInput, null, '\t')}\n`,
	);
	return file;
}

/** The kept inputs in a directory, file by file. */
export function keptInputs(dir: string): Array<{ file: string; kept: KeptInput }> {
	let names: string[];
	try {
		names = readdirSync(dir).filter((name) => name.endsWith('.json'));
	} catch {
		return [];
	}
	return names.sort().map((name) => ({
		file: join(dir, name),
		kept: JSON.parse(readFileSync(join(dir, name), 'utf8')) as KeptInput,
	}));
}

/**
 * Runs a kept input again, as the fuzzer ran it (its canary, its time budget, the store read
 * back afterwards), on a schema of its own: the finding it still makes, or undefined.
 */
export async function replayKept(
	kept: KeptInput,
	options: { postgres?: PgSettings; writerCanaries?: boolean } = {},
): Promise<FuzzFailure | undefined> {
	const { run, admin, close } = await openRun(
		options.postgres ?? pgSettingsFromEnv(),
		kept.canary,
		options.writerCanaries ?? true,
	);
	try {
		await runWithinBudget(run, decodeInput(kept.replay));
		await checkStore(run, admin);
		return undefined;
	} catch (error) {
		return findingOf(error);
	} finally {
		await close();
	}
}

/** Where failing inputs are kept by default, and where `npm test` replays them from. */
export const REGRESSION_DIR = join(__dirname, '..', 'test', 'integration', 'fuzz-regressions');

function flag(argv: string[], name: string): string | undefined {
	const at = argv.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
	if (at < 0) return undefined;
	return argv[at].includes('=') ? argv[at].split('=')[1] : argv[at + 1];
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	const inputs = Number(flag(argv, 'inputs') ?? 1000);
	const seedText = flag(argv, 'seed');
	if (!Number.isInteger(inputs) || inputs < 1)
		throw new Error(`--inputs must be a positive whole number, got ${flag(argv, 'inputs')}`);
	if (seedText !== undefined && !Number.isInteger(Number(seedText)))
		throw new Error(`--seed must be a whole number, got ${seedText}`);
	const result = await runFuzz({
		inputs,
		seed: seedText === undefined ? undefined : Number(seedText),
		writerCanaries: !argv.includes('--no-writer-canaries'),
		strictWrites: !argv.includes('--no-strict-writes'),
		only: flag(argv, 'ops')?.split(','),
		regressionDir: flag(argv, 'keep') ?? REGRESSION_DIR,
	});
	const { crashes, unescaped, leaks, slow, overmasked, seed } = result;
	process.stdout.write(
		`${JSON.stringify({ bench: 'fuzz', inputs: result.inputs, crashes, unescaped, leaks, slow, overmasked, seed })}\n`,
	);
	process.exitCode = result.failure ? 1 : 0;
}

if (require.main === module) {
	main().catch((error: unknown) => {
		process.stderr.write(
			`fuzz failed to run: ${error instanceof Error ? error.stack : String(error)}\n`,
		);
		process.exit(1);
	});
}
