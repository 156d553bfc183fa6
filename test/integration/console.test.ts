import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { createHash } from 'node:crypto';
import {
	CONTENT_SECURITY_POLICY,
	consoleSecret,
	type ConsoleRequest,
	type ConsoleResponse,
	formToken,
	handleConsoleRequest,
	prometheusMetrics,
} from '../../lib/console';
import { beat, pause } from '../../lib/control';
import { notifyAlerts } from '../../lib/alerts';
import { getDeadLetters } from '../../lib/deadletter';
import { promtoolProblems } from '../helpers/promtool';
import { Store } from '../../lib/store';
import { adminQuery, storeConfig, testStore } from '../helpers/store';
import { parkAll } from '../helpers/park';

const { store, schema, cleanup } = testStore('console');
afterAll(cleanup);
let secret: Buffer;
beforeAll(async () => {
	secret = await consoleSecret(store);
});

const basic = (user: string, password = 'secret') =>
	`Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A request as n8n's Webhook node hands it over: headers, query, body. */
function request(
	query: Record<string, string>,
	body?: Record<string, string>,
	user = 'maria',
): ConsoleRequest {
	const headers = { authorization: basic(user), 'user-agent': 'test' };
	const token = formToken(secret, user);
	return { headers, query, body: body ? { token, ...body } : {} };
}

/** Follows the console's redirect after an action, as the browser does (a GET of the page). */
async function follow(response: ConsoleResponse, user = 'maria'): Promise<ConsoleResponse> {
	expect(response.statusCode).toBe(303);
	const query = Object.fromEntries(new URLSearchParams(response.location.replace(/^\?/, '')));
	return await handleConsoleRequest(store, request(query, undefined, user));
}

async function park(payload: unknown, overrides: Record<string, unknown> = {}) {
	const [result] = await parkAll(store, [
		{
			workflowId: 'wfLeads',
			workflowName: 'Lead routing',
			step: 'Upsert Contact',
			integration: 'crm',
			errorClass: 'permanent',
			errorMessage: 'phone must start with +',
			errorStatus: 422,
			idempotencyKey: `k-${Math.random()}`,
			alreadyHappened: 'enriched, not in CRM',
			owner: 'sales-ops',
			payload,
			...overrides,
		},
	]);
	return result.id;
}

describe('console pages', () => {
	it('escapes everything it renders: a payload with <script> shows as text', async () => {
		const id = await park(
			{ name: '<script>alert(1)</script>', note: '"quoted" & <b>bold</b>' },
			{ errorMessage: '<img src=x onerror=alert(2)>' },
		);
		const page = await handleConsoleRequest(store, request({ view: 'item', id }));
		expect(page.statusCode).toBe(200);
		expect(page.body).not.toContain('<script>alert(1)</script>');
		expect(page.body).not.toContain('<img src=x');
		expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
		expect(page.body).toContain('&lt;img src=x onerror=alert(2)&gt;');
		const list = await handleConsoleRequest(store, request({}));
		expect(list.body).toContain('&lt;img src=x onerror=alert(2)&gt;');
		expect(list.body).not.toContain('<img src=x');
	});

	it('filters the list and counts what matches', async () => {
		await park(
			{ n: 1 },
			{
				workflowId: 'wfBilling',
				workflowName: 'Billing',
				step: 'Create Invoice',
				errorClass: 'exhausted',
				owner: 'finance',
			},
		);
		const page = await handleConsoleRequest(store, request({ workflow: 'wfBilling' }));
		expect(page.body).toMatch(/<b class="matching">1<\/b> matching/);
		expect(page.body).toContain('Create Invoice');
		expect(page.body).not.toContain('Upsert Contact</td>');
		const byReason = await handleConsoleRequest(
			store,
			request({ reason: 'exhausted', owner: 'finance' }),
		);
		expect(byReason.body).toMatch(/<b class="matching">1<\/b> matching/);
		// Items Recover gave up, stopped executions' items and superseded owners' can be found by reason.
		expect(byReason.body).toContain('<option value="crashed">crashed</option>');
		expect(byReason.body).toContain('<option value="stopped">stopped</option>');
		expect(byReason.body).toContain('<option value="superseded">superseded</option>');
		const none = await handleConsoleRequest(store, request({ step: 'nothing here' }));
		expect(none.body).toContain('No dead letters match.');
	});

	it('a store it cannot reach is a 503 page that says so, not a failed run', async () => {
		const unreachable = new Store({ ...storeConfig(schema), port: 1 });
		try {
			const response = await handleConsoleRequest(unreachable, request({}));
			expect(response.statusCode).toBe(503);
			expect(response.body).toMatch(/The console cannot read the reliability store: .*unreachable/);
			expect(response.headers['x-frame-options']).toBe('DENY');
			expect(response.body).toContain('http-equiv="Content-Security-Policy"');
		} finally {
			await unreachable.close();
		}
	});

	it('an unknown item is a 404 page', async () => {
		const page = await handleConsoleRequest(store, request({ view: 'item', id: '999999' }));
		expect(page.statusCode).toBe(404);
	});
});

describe('console actions', () => {
	it('resolve needs a note; with one, the history names the operator and the note', async () => {
		const id = await park({ lead: 'a' });
		const refused = await handleConsoleRequest(
			store,
			request({ view: 'item', id }, { action: 'resolve', id }),
		);
		expect(refused.statusCode).toBe(422);
		expect(refused.body).toContain('write a note');
		expect((await getDeadLetters(store, [id]))[0].status).toBe('new');

		const done = await follow(
			await handleConsoleRequest(
				store,
				request(
					{ view: 'item', id },
					{ action: 'resolve', id, note: 'fixed by hand in the CRM' },
					'jonas',
				),
			),
			'jonas',
		);
		expect(done.statusCode).toBe(200);
		expect(done.body).toContain(`Dead letter ${id} resolved (by jonas).`);
		const [record] = await getDeadLetters(store, [id]);
		expect(record.status).toBe('resolved');
		expect(record.history.at(-1)).toMatchObject({
			actor: 'jonas',
			toStatus: 'resolved',
			reason: 'fixed by hand in the CRM',
		});
		expect(done.body).toContain('fixed by hand in the CRM');

		// The same post again (a resubmitted form) is refused: the item is closed.
		const again = await handleConsoleRequest(
			store,
			request({ view: 'item', id }, { action: 'replay', id }, 'jonas'),
		);
		expect(again.statusCode).toBe(422);
		expect(again.body).toContain('is already resolved');
		expect((await getDeadLetters(store, [id]))[0].history).toHaveLength(2);
	});

	it("refuses an action whose token does not come from the operator's own page, and changes nothing", async () => {
		const id = await park({ lead: 'b' });
		const forged: ConsoleRequest = {
			headers: { authorization: basic('maria') },
			query: { view: 'item', id },
			body: {
				action: 'abandon',
				id,
				note: 'x',
				token: formToken(secret, 'mallory'),
			},
		};
		const page = await handleConsoleRequest(store, forged);
		expect(page.statusCode).toBe(422);
		expect((await getDeadLetters(store, [id]))[0].status).toBe('new');
	});

	it('refuses tokens another site could compute: the old credentials hash, another hour, another schema', async () => {
		const id = await park({ lead: 'forged' });
		const post = (headers: Record<string, string>, token: string) =>
			handleConsoleRequest(
				store,
				{ headers, query: { view: 'item', id }, body: { action: 'replay', id, token } },
				{ operatorHeader: 'x-forwarded-user' },
			);
		// Behind a signing-in proxy there is no Authorization header: the old token was a hash of
		// a constant and the user name, which anyone could compute.
		const proxied = { 'x-forwarded-user': 'maria' };
		const oldStyle = createHash('sha256')
			.update('reliability-console\n\nmaria')
			.digest('hex')
			.slice(0, 40);
		const twoHoursAgo = formToken(secret, 'maria', Date.now() - 2 * 3_600_000);
		const other = testStore('console_other');
		try {
			const otherSchema = formToken(await consoleSecret(other.store), 'maria');
			for (const token of [oldStyle, twoHoursAgo, otherSchema, '']) {
				const page = await post(proxied, token);
				expect(page.statusCode).toBe(422);
				expect(page.replayRequested).toBe(0);
			}
		} finally {
			await other.cleanup();
		}
		expect((await getDeadLetters(store, [id]))[0].history).toHaveLength(1);
		// The page's own token for that operator, issued in the previous hour, still works.
		const lastHour = formToken(secret, 'maria', Date.now() - 3_600_000);
		expect((await post(proxied, lastHour)).statusCode).toBe(303);
		expect((await getDeadLetters(store, [id]))[0].status).toBe('replay_requested');
	});

	it('one secret per schema, however many processes ask at once', async () => {
		const { Store } = await import('../../lib/store');
		const fresh = testStore('console_secret');
		try {
			const stores = Array.from({ length: 5 }, () => new Store(fresh.store.config));
			const secrets = await Promise.all(stores.map((s) => consoleSecret(s)));
			await Promise.all(stores.map((s) => s.close()));
			expect(new Set(secrets.map((s) => s.toString('hex'))).size).toBe(1);
			expect(secrets[0].length).toBe(32);
			const rows = await adminQuery(`SELECT * FROM "${fresh.schema}".console_secret`);
			expect(rows).toHaveLength(1);
		} finally {
			await fresh.cleanup();
		}
	});

	it('every response forbids framing, and every page carries the policy: no scripts, forms only to itself', async () => {
		const id = await park({ lead: 'h' });
		const responses = [
			await handleConsoleRequest(store, request({})),
			await handleConsoleRequest(store, request({ view: 'item', id })),
			await handleConsoleRequest(store, request({ view: 'item', id: '0' })),
			await handleConsoleRequest(store, request({ view: 'item', id }, { action: 'replay', id })),
			await handleConsoleRequest(store, request({}, { action: 'nonsense' })),
		];
		const policyOf = (body: string) =>
			/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/
				.exec(body)?.[1]
				.replace(/&#39;/g, "'");
		for (const response of responses) {
			expect(response.headers['x-frame-options']).toBe('DENY');
			expect(policyOf(response.body)).toBe(CONTENT_SECURITY_POLICY);
		}
		expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
		expect(CONTENT_SECURITY_POLICY).toContain("script-src 'none'");
		expect(CONTENT_SECURITY_POLICY).toContain("form-action 'self'");
		// The policy comes before anything it governs, and the inline stylesheet is the one its hash allows.
		expect(responses[0].body.indexOf('Content-Security-Policy')).toBeLessThan(
			responses[0].body.indexOf('<style>'),
		);
		const style = /<style>([\s\S]*?)<\/style>/.exec(responses[0].body)![1];
		const hash = createHash('sha256').update(style).digest('base64');
		expect(CONTENT_SECURITY_POLICY).toContain(`style-src 'sha256-${hash}'`);
	});

	it('refuses actions without a signed-in operator', async () => {
		const id = await park({ lead: 'c' });
		const page = await handleConsoleRequest(store, {
			headers: {},
			query: {},
			body: { action: 'replay', id, token: formToken(secret, '') },
		});
		expect(page.statusCode).toBe(422);
		expect((await getDeadLetters(store, [id]))[0].status).toBe('new');
	});

	it('replay and batch replay by filter set replay_requested, say how many, and record the operator', async () => {
		const one = await park({ lead: 'd' });
		const single = await handleConsoleRequest(
			store,
			request({ view: 'item', id: one }, { action: 'replay', id: one }),
		);
		expect(single.replayRequested).toBe(1);
		expect((await getDeadLetters(store, [one]))[0].history.at(-1)).toMatchObject({
			actor: 'maria',
			toStatus: 'replay_requested',
		});

		const batchIds = [
			await park({ lead: 'e' }, { step: 'Batch Step' }),
			await park({ lead: 'f' }, { step: 'Batch Step' }),
		];
		const batch = await handleConsoleRequest(
			store,
			request(
				{ step: 'Batch Step' },
				{ action: 'batch_replay', step: 'Batch Step', note: 'mapping fixed' },
				'ops-lead',
			),
		);
		expect(batch.replayRequested).toBe(2);
		for (const record of await getDeadLetters(store, batchIds)) {
			expect(record.status).toBe('replay_requested');
			expect(record.history.at(-1)).toMatchObject({ actor: 'ops-lead', reason: 'mapping fixed' });
		}
	});

	it("an alert issue's link lists exactly its items, and a batch replay there replays them all", async () => {
		const cause = { step: 'Issue Step', errorMessage: 'phone: invalid format "x"' };
		const ids = [
			await park({ lead: 'i1' }, cause),
			await park({ lead: 'i2' }, cause),
			await park({ lead: 'i3' }, cause),
		];
		const other = await park({ lead: 'i4' }, { step: 'Issue Step', errorMessage: 'owner unknown' });
		const [notified] = await notifyAlerts(
			store,
			[
				...ids.map((id) => ({ deadLetterId: id, ...cause, workflowId: 'wfLeads' })),
				{
					deadLetterId: other,
					step: 'Issue Step',
					errorMessage: 'owner unknown',
					workflowId: 'wfLeads',
				},
			],
			{ consoleUrl: 'https://n8n.example/webhook/reliability-console' },
		);
		const issue = notified.issueId!;
		expect(notified.notifications[0].issue!.link).toBe(
			`https://n8n.example/webhook/reliability-console?issue=${issue}`,
		);

		const issues = await handleConsoleRequest(store, request({ view: 'issues' }));
		expect(issues.body).toContain(`data-id="${issue}"`);
		const list = await handleConsoleRequest(store, request({ issue }));
		const shown = [...list.body.matchAll(/<tr data-id="(\d+)"/g)].map((m) => m[1]);
		expect(shown.sort()).toEqual([...ids].sort());

		const batch = await handleConsoleRequest(
			store,
			request({ issue }, { action: 'batch_replay', issue, note: 'mapping fixed' }, 'ops-lead'),
		);
		expect(batch.replayRequested).toBe(3);
		expect((await getDeadLetters(store, [other]))[0].status).toBe('new');
	});

	it('pause and resume from the controls page record who and why', async () => {
		const paused = await follow(
			await handleConsoleRequest(
				store,
				request(
					{ view: 'controls' },
					{ action: 'pause', scope: 'integration', name: 'erp', note: 'ERP maintenance window' },
				),
			),
		);
		expect(paused.statusCode).toBe(200);
		expect(paused.body).toContain('ERP maintenance window');
		const resumed = await handleConsoleRequest(
			store,
			request(
				{ view: 'controls' },
				{ action: 'resume', scope: 'integration', name: 'erp', note: 'window over' },
				'jonas',
			),
		);
		expect(resumed.statusCode).toBe(303);
		const events = await adminQuery<{ paused: boolean; actor: string; reason: string }>(
			`SELECT paused, actor, reason FROM "${schema}".pause_events WHERE name = 'erp' ORDER BY id`,
		);
		expect(events).toEqual([
			{ paused: true, actor: 'maria', reason: 'ERP maintenance window' },
			{ paused: false, actor: 'jonas', reason: 'window over' },
		]);
	});

	it("the stats page draws one bar per day with the day's count", async () => {
		const page = await handleConsoleRequest(store, request({ view: 'stats' }));
		const today = new Date().toISOString().slice(0, 10);
		const [{ n }] = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".dead_letters WHERE (parked_at AT TIME ZONE 'UTC')::date = $1::date`,
			[today],
		);
		expect(page.body).toContain(`data-day="${today}" data-parked="${n}"`);
		expect(page.body).toMatch(/<svg class="chart"/);
	});
});

describe('Prometheus metrics', () => {
	it('parse as Prometheus text and match the store', async () => {
		await pause(store, 'integration', 'crm', 'maria', 'outage');
		await park({ lead: 'held one' }, { status: 'held' });
		await beat(store, { name: 'nightly import', periodSeconds: 3600 });
		await adminQuery(
			`UPDATE "${schema}".heartbeats SET last_beat_at = now() - interval '2 hours' WHERE name = 'nightly import'`,
		);
		await beat(store, { name: 'hourly sync', periodSeconds: 3600, graceSeconds: 600 });

		const text = await prometheusMetrics(store);
		const families = parsePrometheusTextFormat(text) as Array<{
			name: string;
			type: string;
			metrics: Array<{ labels?: Record<string, string>; value: string }>;
		}>;
		const family = (name: string) => families.find((f) => f.name === name)!;
		for (const f of families)
			expect(f.type).toBe(f.name === 'reliability_dead_letters_parked_total' ? 'COUNTER' : 'GAUGE');

		const open = await adminQuery<{
			workflow_id: string;
			step: string;
			error_class: string;
			status: string;
			n: number;
		}>(
			`SELECT workflow_id, step, error_class, status, count(*)::int AS n FROM "${schema}".dead_letters WHERE is_open GROUP BY 1, 2, 3, 4`,
		);
		const samples = family('reliability_dead_letters_open').metrics;
		expect(samples).toHaveLength(open.length);
		for (const row of open) {
			const sample = samples.find(
				(s) =>
					s.labels!.workflow_id === row.workflow_id &&
					s.labels!.step === row.step &&
					s.labels!.reason === row.error_class &&
					s.labels!.status === row.status,
			);
			expect(Number(sample?.value)).toBe(row.n);
		}
		expect(Number(family('reliability_dead_letters_open_all').metrics[0].value)).toBe(
			open.reduce((s, r) => s + r.n, 0),
		);
		const held = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${schema}".dead_letters WHERE status = 'held' AND integration = 'crm'`,
		);
		expect(
			Number(
				family('reliability_held_items').metrics.find((m) => m.labels!.integration === 'crm')!
					.value,
			),
		).toBe(held[0].n);
		expect(held[0].n).toBeGreaterThan(0);
		const states = family('reliability_heartbeat_state').metrics;
		expect(
			Number(
				states.find((m) => m.labels!.name === 'nightly import' && m.labels!.state === 'down')!
					.value,
			),
		).toBe(1);
		expect(
			Number(
				states.find((m) => m.labels!.name === 'hourly sync' && m.labels!.state === 'up')!.value,
			),
		).toBe(1);
		expect(
			Number(
				family('reliability_heartbeats').metrics.find((m) => m.labels!.state === 'down')!.value,
			),
		).toBe(1);
		expect(
			Number(family('reliability_paused').metrics.find((m) => m.labels!.name === 'crm')!.value),
		).toBe(1);
		const parked = await adminQuery<{ workflow_id: string; step: string; n: number }>(
			`SELECT workflow_id, step, count(*)::int AS n FROM "${schema}".dead_letters GROUP BY 1, 2`,
		);
		const parkedSamples = family('reliability_dead_letters_parked_total').metrics;
		expect(parkedSamples).toHaveLength(parked.length);
		for (const row of parked)
			expect(
				Number(
					parkedSamples.find(
						(m) => m.labels!.workflow_id === row.workflow_id && m.labels!.step === row.step,
					)?.value,
				),
			).toBe(row.n);
		const [{ oldest }] = await adminQuery<{ oldest: number }>(
			`SELECT extract(epoch FROM now() - min(parked_at))::float8 AS oldest FROM "${schema}".dead_letters WHERE is_open AND status <> 'held' AND workflow_id = 'wfLeads' AND step = 'Upsert Contact'`,
		);
		const age = Number(
			family('reliability_dead_letters_oldest_age_seconds').metrics.find(
				(m) => m.labels!.workflow_id === 'wfLeads' && m.labels!.step === 'Upsert Contact',
			)!.value,
		);
		expect(Math.abs(age - oldest)).toBeLessThan(5);
	});

	it('escapes label values (quotes, backslashes, newlines): promtool accepts the text and it parses', async () => {
		await park({ x: 1 }, { workflowId: 'wf "odd" \\ name\nline2', step: 'Step "1"' });
		const text = await prometheusMetrics(store);
		expect(await promtoolProblems(text)).toEqual([]);
		const families = parsePrometheusTextFormat(text) as Array<{
			name: string;
			metrics: Array<{ labels?: Record<string, string> }>;
		}>;
		const open = families.find((f) => f.name === 'reliability_dead_letters_open')!;
		expect(open.metrics.some((m) => m.labels!.step === 'Step "1"')).toBe(true);
	});
});

describe('secrets on pages and in metrics', () => {
	const canary = 'cAnArY-c0ns0le';

	it('a row parked by an older version, with secrets in it, shows them masked on every page', async () => {
		// Written with SQL, as an older version stored it: nothing masked.
		const [{ id }] = await adminQuery<{ id: string }>(
			`INSERT INTO "${schema}".dead_letters (workflow_id, workflow_name, step, item_key, error_class, error_message, payload, expires_at)
			 VALUES ('wfOld', 'Old workflow', 'Old Step', 'old-1', 'permanent', $1, $2, now() + interval '1 day') RETURNING id`,
			[
				`401 Unauthorized: Authorization: Bearer ${canary}`,
				JSON.stringify({ headers: { 'x-api-key': canary }, body: `password=${canary}` }),
			],
		);
		await adminQuery(
			`INSERT INTO "${schema}".dead_letter_events (dead_letter_id, actor, to_status, reason) VALUES ($1, 'n8n', 'new', $2)`,
			[id, `token=${canary}`],
		);
		await pause(store, 'integration', 'old-crm', 'maria', `vendor gave us api_key=${canary}`);
		const pages = [
			await handleConsoleRequest(store, request({ view: 'item', id: String(id) })),
			await handleConsoleRequest(store, request({ workflow: 'wfOld' })),
			await handleConsoleRequest(store, request({ view: 'controls' })),
		];
		for (const page of pages) {
			expect(page.statusCode).toBe(200);
			expect(page.body).not.toContain(canary);
		}
		expect(pages[0].body).toContain('Authorization: [masked]');
		expect(pages[2].body).toContain('vendor gave us api_key=[masked]');
		const [{ reason }] = await adminQuery<{ reason: string }>(
			`SELECT reason FROM "${schema}".pauses WHERE name = 'old-crm'`,
		);
		expect(reason).toBe('vendor gave us api_key=[masked]');
	});

	it('a credential pasted into a search is masked in the box and in the link back after an action', async () => {
		const key = `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${canary}\n-----END RSA PRIVATE KEY-----`;
		const list = await handleConsoleRequest(store, request({ view: 'list', search: key }));
		expect(list.statusCode).toBe(200);
		expect(list.body).not.toContain(canary);
		const done = await handleConsoleRequest(
			store,
			request(
				{ view: 'list', q: `error from upstream: ${key} (retrying)`, search: key },
				{
					action: 'batch_replay',
					status: 'new',
					workflow: 'wf-none',
				},
			),
		);
		expect(done.statusCode).toBe(303);
		expect(done.location).not.toContain(canary);
		expect(done.body).not.toContain(canary);
		expect(decodeURIComponent(done.location.replace(/\+/g, ' '))).toContain('[masked]');
	});

	it('a secret in a workflow name or step never reaches a metrics label', async () => {
		await park({ x: 1 }, { workflowName: `Sync (token=${canary})`, step: `Bearer ${canary}` });
		const text = await prometheusMetrics(store);
		expect(text).not.toContain(canary);
		expect(text).toContain('workflow="Sync (token=[masked])"');
	});
});

describe('hostile requests and options', () => {
	it('options of the wrong type are an error naming the option; a request of any shape is a page', async () => {
		const { ConfigurationError } = await import('../../lib/errors');
		await expect(
			handleConsoleRequest(store, request({}), { operatorHeader: 1 as unknown as string }),
		).rejects.toThrow(/Operator Header must be text/);
		await expect(handleConsoleRequest(store, request({}), { days: 0 })).rejects.toBeInstanceOf(
			ConfigurationError,
		);
		for (const shape of [null, [], 'text', { headers: 'x', query: [1], body: 7 }]) {
			const page = await handleConsoleRequest(store, shape as unknown as ConsoleRequest);
			expect(page.statusCode).toBe(200);
			expect(page.operator).toBeNull();
		}
	});
});

describe('who may act on which item (Teams)', () => {
	const teams = JSON.stringify({ maria: ['sales-ops'], lee: ['finance'], olga: ['*'] });
	const as = (
		user: string,
		query: Record<string, string>,
		body?: Record<string, string>,
	): Promise<ConsoleResponse> => handleConsoleRequest(store, request(query, body, user), { teams });
	const statusOf = async (id: string) => (await getDeadLetters(store, [id]))[0].status;

	it("an operator of another team sees the item read-only and cannot replay it; the owner's team can", async () => {
		const id = await park({ lead: 'teams-1' }, { owner: 'sales-ops', integration: 'teams-api' });
		const page = await as('lee', { view: 'item', id });
		expect(page.body).toContain(
			'Read-only: this item belongs to team sales-ops, and lee is in finance',
		);
		expect(page.body).not.toContain('class="action-replay"');

		const refused = await as('lee', { view: 'item', id }, { action: 'replay', id });
		expect(refused.statusCode).toBe(422);
		expect(refused.body).toContain(`You may not replay dead letter ${id}`);
		expect(refused.body).toContain('Ask someone in team sales-ops to do it');
		expect(await statusOf(id)).toBe('new');

		const owner = await as('maria', { view: 'item', id });
		expect(owner.body).toContain('class="action-replay"');
		await follow(await as('maria', { view: 'item', id }, { action: 'replay', id }));
		expect(await statusOf(id)).toBe('replay_requested');
		const [record] = await getDeadLetters(store, [id]);
		expect(record.history.at(-1)).toMatchObject({ actor: 'maria', toStatus: 'replay_requested' });
	});

	it('an operator in no team is read-only everywhere; * acts on every team; unowned items are anyone listed', async () => {
		const owned = await park({ lead: 'teams-2' }, { owner: 'finance', integration: 'teams-api' });
		const unowned = await park({ lead: 'teams-3' }, { owner: undefined, integration: 'teams-api' });
		for (const name of ['constructor', '__proto__', 'toString']) {
			const refused = await as(
				name,
				{ view: 'controls' },
				{ action: 'pause', scope: 'integration', name: 'crm-teams' },
			);
			expect(refused.statusCode).toBe(422);
		}
		const stranger = await as(
			'sam',
			{ view: 'item', id: owned },
			{ action: 'abandon', id: owned, note: 'no' },
		);
		expect(stranger.statusCode).toBe(422);
		expect(stranger.body).toContain('sam is in no team of this console');
		const controls = await as('sam', { view: 'controls' });
		expect(controls.body).toContain('Read-only: sam is in no team of this console');
		expect(controls.body).not.toContain('class="filters pause-form"');
		expect((await as('sam', { view: 'list', status: 'new' })).body).not.toContain('class="batch"');
		expect((await as('lee', { view: 'controls' })).body).toContain('class="filters pause-form"');
		const pauseRefused = await as(
			'sam',
			{ view: 'controls' },
			{ action: 'pause', scope: 'integration', name: 'crm-teams' },
		);
		expect(pauseRefused.statusCode).toBe(422);
		const [paused] = await adminQuery<{ n: string }>(
			`SELECT count(*) AS n FROM "${schema}".pauses WHERE name = 'crm-teams' AND paused`,
		);
		expect(paused.n).toBe('0');
		expect(await statusOf(owned)).toBe('new');

		await follow(
			await as(
				'olga',
				{ view: 'item', id: owned },
				{ action: 'resolve', id: owned, note: 'fixed by hand' },
			),
			'olga',
		);
		expect(await statusOf(owned)).toBe('resolved');
		await follow(
			await as('lee', { view: 'item', id: unowned }, { action: 'being_fixed', id: unowned }),
			'lee',
		);
		expect(await statusOf(unowned)).toBe('being_fixed');
	});

	it("a batch replay takes only the items of the operator's teams", async () => {
		const mine = await park(
			{ lead: 'teams-4' },
			{ owner: 'finance', workflowId: 'wfTeams', integration: 'teams-api' },
		);
		const theirs = await park(
			{ lead: 'teams-5' },
			{ owner: 'sales-ops', workflowId: 'wfTeams', integration: 'teams-api' },
		);
		const done = await as(
			'lee',
			{ view: 'list' },
			{ action: 'batch_replay', status: 'new', workflow: 'wfTeams' },
		);
		expect(done.statusCode).toBe(303);
		expect(done.replayRequested).toBe(1);
		expect(await statusOf(mine)).toBe('replay_requested');
		expect(await statusOf(theirs)).toBe('new');
	});

	it("a batch replay's limit counts only the operator's items: newer items of other teams do not crowd them out", async () => {
		const mine = await park(
			{ lead: 'teams-6' },
			{ owner: 'finance', workflowId: 'wfTeamsLimit', integration: 'teams-api' },
		);
		const theirs: string[] = [];
		for (let i = 0; i < 3; i++)
			theirs.push(
				await park(
					{ lead: `teams-7-${i}` },
					{ owner: 'sales-ops', workflowId: 'wfTeamsLimit', integration: 'teams-api' },
				),
			);
		const done = await handleConsoleRequest(
			store,
			request(
				{ view: 'list' },
				{ action: 'batch_replay', status: 'new', workflow: 'wfTeamsLimit' },
				'lee',
			),
			{ teams, batchLimit: 2 },
		);
		expect(done.replayRequested).toBe(1);
		expect(await statusOf(mine)).toBe('replay_requested');
		for (const id of theirs) expect(await statusOf(id)).toBe('new');
	});

	it('a Teams option that is not an object of lists is refused, saying what to write', async () => {
		for (const bad of ['{maria:', '["maria"]', '{"maria": [1]}']) {
			await expect(handleConsoleRequest(store, request({}), { teams: bad })).rejects.toThrow(
				/Teams/,
			);
		}
	});
});
