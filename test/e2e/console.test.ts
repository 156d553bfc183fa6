import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DemoApi } from '../../demo/api';
import { n8nVersionsUnderTest, REPO_ROOT } from '../../dev/harness/paths';
import { waitFor } from '../../dev/harness/ports';
import {
	CONSOLE_OPERATOR,
	consoleCredentials,
	consolePage,
	launchChromium,
} from '../helpers/chromium';
import { promtoolProblems } from '../helpers/promtool';
import { adminQuery } from '../helpers/store';
import { bundledToActivate, bundledWorkflows } from '../../dev/bundled';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * The operator console in headless Chromium against real n8n: the bundled console workflow
 * imported as a user would, signed in through n8n's webhook Basic Auth. Every test ends by
 * reading the store's rows or the demo CRM. Screenshots go to test/artifacts/.
 */
jest.setTimeout(600_000);

const EXAMPLE = 'relLeadRouting01';
const CONSOLE = 'relOperatorConsole';
const METRICS = 'relMetricsWorkflow';
const OPERATOR = CONSOLE_OPERATOR;
const METRICS_TOKEN = 'metrics-token-7';

const demo = new DemoApi();
let browser: Browser;
beforeAll(async () => {
	await demo.start();
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
	await demo.stop();
});

describe.each(n8nVersionsUnderTest())('the operator console in n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	let context: BrowserContext;
	let page: Page;
	const artifacts = join(REPO_ROOT, 'test', 'artifacts', `console-${version}`);
	const shot = async (name: string) => {
		await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
	};
	const consoleUrl = (query = '') => `${ctx!.n8n.baseUrl}/webhook/reliability-console${query}`;
	const deadLetters = (where = 'true') =>
		adminQuery<Record<string, unknown> & { id: string; status: string }>(
			`SELECT * FROM "${ctx!.schema}".dead_letters WHERE ${where} ORDER BY id`,
		);
	const waitForStatus = (id: string, status: string) =>
		waitFor(
			`dead letter ${id} to be ${status}`,
			async () =>
				(await deadLetters(`id = ${Number(id)}`))[0]?.status === status ? true : undefined,
			90_000,
			500,
		);

	/** A lead whose local phone number the CRM rejects: the worked example parks it. */
	async function parkLead(submissionId: string, name: string): Promise<string> {
		const before = (await ctx!.n8n.api.executions(EXAMPLE)).length;
		const response = await ctx!.n8n.api.webhook('lead-form', {
			submissionId,
			email: `${submissionId}@example.com`,
			name,
			phone: '030 1234567',
		});
		expect(response.status).toBe(200);
		await ctx!.n8n.api.waitForExecutions(EXAMPLE, before + 1, 120_000);
		const [record] = await waitFor(
			'the lead parked',
			async () => {
				const rows = await deadLetters(`idempotency_key = '${submissionId}:crm-upsert'`);
				return rows.length ? rows : undefined;
			},
			60_000,
		);
		return String(record.id);
	}

	beforeAll(async () => {
		demo.reset();
		mkdirSync(artifacts, { recursive: true });
		ctx = await startWithPackage(
			version,
			'console',
			bundledWorkflows(demo.url),
			consoleCredentials(METRICS_TOKEN),
			[...bundledToActivate(Number(version.split('.')[0])), CONSOLE, METRICS],
		);
		({ context, page } = await consolePage(browser));
	});

	afterAll(async () => {
		await context?.close();
		await stopAndClean(ctx);
	});

	let toResolve = '';
	let toReplay = '';

	it('an unauthenticated request is refused and changes nothing', async () => {
		toResolve = await parkLead('console-a', 'Ana <script>alert(1)</script> Lima');
		toReplay = await parkLead('console-b', 'Bruno Costa');

		const anonymous = await fetch(consoleUrl());
		expect(anonymous.status).toBe(401);
		expect(await anonymous.text()).not.toContain('Dead letters');
		const wrongPassword = await fetch(consoleUrl(), {
			headers: { authorization: `Basic ${Buffer.from('maria:guess').toString('base64')}` },
		});
		expect([401, 403]).toContain(wrongPassword.status);
		expect(await wrongPassword.text()).not.toContain('Dead letters');
		const forged = await fetch(consoleUrl(`?view=item&id=${toResolve}`), {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: new URLSearchParams({ action: 'abandon', id: toResolve, note: 'x' }).toString(),
		});
		expect(forged.status).toBe(401);
		const otherPage = await fetch(consoleUrl(`?view=item&id=${toResolve}`), {
			method: 'POST',
			headers: {
				'content-type': 'application/x-www-form-urlencoded',
				authorization: `Basic ${Buffer.from(`${OPERATOR.username}:${OPERATOR.password}`).toString('base64')}`,
			},
			body: new URLSearchParams({
				action: 'abandon',
				id: toResolve,
				note: 'x',
				token: 'not-from-this-page',
			}).toString(),
		});
		expect(otherPage.status).toBe(422);
		const metrics = await fetch(`${ctx!.n8n.baseUrl}/webhook/reliability-metrics`);
		expect(metrics.status).toBe(403);
		expect((await deadLetters(`id = ${Number(toResolve)}`))[0].status).toBe('new');
	});

	it('loads the list with counts, opens an item, resolves it with a note: who and why are in its history', async () => {
		await page.goto(consoleUrl());
		await page.waitForSelector('table.dead-letters');
		expect(await page.locator('b.operator').textContent()).toBe(OPERATOR.username);
		expect(await page.locator('b.matching').textContent()).toBe('2');
		expect(await page.locator(`tr[data-id="${toResolve}"]`).count()).toBe(1);
		await shot('01-list');

		await page.click(`tr[data-id="${toResolve}"] a`);
		await page.waitForSelector('pre.payload');
		// The payload's <script> is shown as text, never run (a dialog would fail the test).
		expect(await page.locator('pre.payload').textContent()).toContain(
			'Ana <script>alert(1)</script> Lima',
		);
		expect(await page.locator('code.key').textContent()).toBe('console-a:crm-upsert');
		expect(await page.locator('a.run-link').getAttribute('href')).toMatch(
			new RegExp(`/workflow/${EXAMPLE}/executions/\\d+$`),
		);
		expect(await page.locator('dd.error-message').textContent()).toContain('phone');
		expect(await page.content()).toContain('enriched, not in CRM');
		await shot('02-item');

		await page.fill(
			'form.action-resolve textarea[name=note]',
			'Called Ana, entered by hand in the CRM',
		);
		await page.click('form.action-resolve button');
		await page.waitForSelector('.flash.ok');
		const lastEvent = page.locator('table.history tbody tr').last();
		expect(await lastEvent.locator('td.actor').textContent()).toBe(OPERATOR.username);
		expect(await lastEvent.locator('td.reason').textContent()).toBe(
			'Called Ana, entered by hand in the CRM',
		);
		await shot('03-resolved');

		const events = await adminQuery<{ actor: string; to_status: string; reason: string }>(
			`SELECT actor, to_status, reason FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
			[toResolve],
		);
		expect(events.at(-1)).toEqual({
			actor: OPERATOR.username,
			to_status: 'resolved',
			reason: 'Called Ana, entered by hand in the CRM',
		});
		expect((await deadLetters(`id = ${Number(toResolve)}`))[0].status).toBe('resolved');
	});

	it('a page on another site can neither post an action for the signed-in operator nor frame the console', async () => {
		const target = await parkLead('console-x', 'Xavier Reis');
		const itemUrl = consoleUrl(`?view=item&id=${target}`);
		const authorization = `Basic ${Buffer.from(`${OPERATOR.username}:${OPERATOR.password}`).toString('base64')}`;
		// The token of the old console: a hash of the request's credentials and a constant, which a
		// site that knows (or guesses) the sign-in could compute ahead of time.
		const oldStyle = createHash('sha256')
			.update(`reliability-console\n${authorization}\n`)
			.digest('hex')
			.slice(0, 40);
		const autoPost = (token: string | undefined) =>
			`<!doctype html><form id="f" method="post" action="${itemUrl}">
<input type="hidden" name="action" value="abandon"><input type="hidden" name="id" value="${target}">
<input type="hidden" name="note" value="cross-site">${token === undefined ? '' : `<input type="hidden" name="token" value="${token}">`}
</form><script>document.getElementById('f').submit()</script>`;
		const pages: Record<string, string> = {
			'/old-token': autoPost(oldStyle),
			'/no-token': autoPost(undefined),
			'/wrong-token': autoPost('0123456789abcdef0123456789abcdef01234567'),
			'/frame': `<!doctype html><iframe name="console" src="${itemUrl}" width="800" height="400"></iframe>
<iframe name="control" src="${demo.url}/_stats" width="400" height="100"></iframe>`,
		};
		const evil = createServer((request, response) => {
			response.writeHead(200, { 'content-type': 'text/html' });
			response.end(pages[request.url ?? ''] ?? 'not here');
		});
		await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
		const evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
		const attacked = await context.newPage();
		try {
			for (const path of ['/old-token', '/no-token', '/wrong-token']) {
				const answer = attacked.waitForResponse((r) => r.url() === itemUrl && r.status() !== 401);
				await attacked.goto(`${evilOrigin}${path}`);
				// The browser did post, signed in as the operator: the console refused it.
				expect((await answer).status()).toBe(422);
			}
			const [record] = await deadLetters(`id = ${Number(target)}`);
			expect(record.status).toBe('new');
			// The page itself says what it may load: no scripts, forms only to the console.
			const direct = await fetch(itemUrl, { headers: { authorization } });
			expect(direct.headers.get('x-frame-options')).toBe('DENY');
			expect(await direct.text()).toMatch(
				/<meta http-equiv="Content-Security-Policy" content="default-src &#39;self&#39;;[^"]*script-src &#39;none&#39;[^"]*form-action &#39;self&#39;">/,
			);
			const events = await adminQuery(
				`SELECT 1 FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1`,
				[target],
			);
			expect(events).toHaveLength(1);

			// Chrome keeps Basic Auth out of cross-site frames; an operator signed in through a proxy
			// (a cookie) would send credentials, so the framed request carries them here.
			await attacked.route(itemUrl, (route) =>
				route.continue({ headers: { ...route.request().headers(), authorization } }),
			);
			const framed = attacked.waitForResponse((r) => r.url() === itemUrl);
			await attacked.goto(`${evilOrigin}/frame`);
			// The console answered the framed request (signed in) with its page...
			const response = await framed;
			expect(response.status()).toBe(200);
			expect(response.headers()['x-frame-options']).toBe('DENY');
			// ...and the browser refused to show it, while a frame without those headers shows.
			const control = attacked.frame({ name: 'control' })!;
			await control.waitForLoadState();
			expect(await control.content()).toContain('enrichCalls');
			const frame = attacked.frame({ name: 'console' })!;
			await frame.waitForLoadState();
			expect(await frame.content()).not.toContain('Dead letter');
			expect(await frame.locator('pre.payload').count()).toBe(0);
			await attacked.screenshot({ path: join(artifacts, '04-framed-blocked.png') });
		} finally {
			await attacked.close();
			evil.closeAllConnections();
			await new Promise((resolve) => evil.close(resolve));
		}
	});

	it('replays from the page: the item ends replayed and the demo CRM has exactly one effect for it', async () => {
		// The cause is fixed on the CRM's side: it accepts local numbers now.
		demo.faults = { ...demo.faults, rejectLocalPhones: false };
		await page.goto(consoleUrl(`?view=item&id=${toReplay}`));
		await page.fill('form.action-replay textarea[name=note]', 'CRM accepts local numbers again');
		await page.click('form.action-replay button');
		await page.waitForSelector('.flash.ok');
		await waitForStatus(toReplay, 'replayed');
		await page.reload();
		await shot('04-replayed');

		const effects = demo.effects.filter((e) => e.key === 'console-b:crm-upsert');
		expect(effects).toHaveLength(1);
		expect(demo.contacts.filter((c) => c.email === 'console-b@example.com')).toHaveLength(1);
		const events = await adminQuery<{ actor: string; to_status: string }>(
			`SELECT actor, to_status FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
			[toReplay],
		);
		expect(events.map((e) => e.to_status)).toEqual([
			'new',
			'replay_requested',
			'being_fixed',
			'replayed',
		]);
		expect(events[1].actor).toBe(OPERATOR.username);
	});

	it('pausing an integration holds its writes; resuming releases and replays them once', async () => {
		await page.goto(consoleUrl('?view=controls'));
		await page.fill('form.pause-form input[name=name]', 'crm');
		await page.fill('form.pause-form input[name=note]', 'CRM migration tonight, ticket 4711');
		await page.click('form.pause-form button');
		await page.waitForSelector('tr.pause[data-name="crm"]');

		const before = (await ctx!.n8n.api.executions(EXAMPLE)).length;
		await ctx!.n8n.api.webhook('lead-form', {
			submissionId: 'console-c',
			email: 'console-c@example.com',
			name: 'Carla Dias',
			phone: '+49 30 1234567',
		});
		await ctx!.n8n.api.waitForExecutions(EXAMPLE, before + 1, 120_000);
		const [held] = await waitFor(
			'the write held',
			async () => {
				const rows = await deadLetters(`idempotency_key = 'console-c:crm-upsert'`);
				return rows.length ? rows : undefined;
			},
			60_000,
		);
		expect(held).toMatchObject({ status: 'held', integration: 'crm', error_class: 'paused' });
		expect(demo.effects.filter((e) => e.key === 'console-c:crm-upsert')).toHaveLength(0);
		await page.reload();
		expect(await page.locator('tr.pause[data-name="crm"] td.num').textContent()).toBe('1');
		await shot('05-paused');

		await page.fill('tr.pause[data-name="crm"] input[name=note]', 'migration done');
		await page.click('tr.pause[data-name="crm"] button');
		await page.waitForSelector('.flash.ok');
		await waitForStatus(String(held.id), 'replayed');
		expect(demo.effects.filter((e) => e.key === 'console-c:crm-upsert')).toHaveLength(1);
		const pauses = await adminQuery<{ paused: boolean; actor: string; reason: string }>(
			`SELECT paused, actor, reason FROM "${ctx!.schema}".pause_events WHERE name = 'crm' ORDER BY id`,
		);
		expect(pauses).toEqual([
			{ paused: true, actor: OPERATOR.username, reason: 'CRM migration tonight, ticket 4711' },
			{ paused: false, actor: OPERATOR.username, reason: 'migration done' },
		]);
	});

	it('the stats page charts parks per day; the metrics endpoint passes promtool and matches the store', async () => {
		await page.goto(consoleUrl('?view=stats'));
		await page.waitForSelector('svg.chart');
		const today = new Date().toISOString().slice(0, 10);
		const [{ n: parkedToday }] = await adminQuery<{ n: number }>(
			`SELECT count(*)::int AS n FROM "${ctx!.schema}".dead_letters WHERE (parked_at AT TIME ZONE 'UTC')::date = $1::date`,
			[today],
		);
		expect(
			await page.locator(`svg.chart rect[data-day="${today}"]`).getAttribute('data-parked'),
		).toBe(String(parkedToday));
		await shot('06-stats');

		const scrape = async () => {
			const response = await fetch(`${ctx!.n8n.baseUrl}/webhook/reliability-metrics`, {
				headers: { authorization: `Bearer ${METRICS_TOKEN}` },
			});
			expect(response.status).toBe(200);
			expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
			return await response.text();
		};
		const text = await scrape();
		expect(await promtoolProblems(text)).toEqual([]);
		const families = parsePrometheusTextFormat(text);
		const family = (name: string) => families.find((f) => f.name === name)!;
		const open = await deadLetters('is_open');
		expect(Number(family('reliability_dead_letters_open_all').metrics[0].value)).toBe(open.length);
		const parked = await adminQuery<{ workflow_id: string; step: string; n: number }>(
			`SELECT workflow_id, step, count(*)::int AS n FROM "${ctx!.schema}".dead_letters GROUP BY 1, 2`,
		);
		const parkedTotal = family('reliability_dead_letters_parked_total');
		expect(parkedTotal.type).toBe('COUNTER');
		expect(
			parkedTotal.metrics.map((m) => [m.labels!.workflow_id, m.labels!.step, Number(m.value)]),
		).toEqual(expect.arrayContaining(parked.map((r) => [r.workflow_id, r.step, r.n])));
		expect(parkedTotal.metrics).toHaveLength(parked.length);
		expect(
			Number(family('reliability_paused').metrics.find((m) => m.labels!.name === 'crm')!.value),
		).toBe(0);
		expect(family('reliability_held_items').metrics).toEqual([]);

		// Scrapes are not kept as executions: the metrics workflow saves only failed ones. n8n
		// answers before the execution ends, so its record may exist for a moment.
		await scrape();
		await scrape();
		await waitFor(
			'no saved executions of the metrics workflow',
			async () => ((await ctx!.n8n.api.executions(METRICS)).length === 0 ? true : undefined),
			30_000,
			500,
		);
	});

	it("keeps none of its page views or actions as executions, so no saved run holds the operator's sign-in", async () => {
		// Every test above browsed and acted as the operator; n8n answers before the execution
		// ends, so its record may exist for a moment.
		await page.goto(consoleUrl());
		await waitFor(
			'no saved executions of the console workflow',
			async () => ((await ctx!.n8n.api.executions(CONSOLE)).length === 0 ? true : undefined),
			30_000,
			500,
		);
	});

	it("with Teams set, an operator of another team sees an item read-only; the owner's team acts on it", async () => {
		demo.faults = { ...demo.faults, rejectLocalPhones: true };
		const id = await parkLead('console-teams', 'Tea Team');
		// Behind a signing-in proxy that names the operator; maria is in sales-ops (the example's owner).
		await ctx!.n8n.api.updateWorkflow(CONSOLE, (workflow) => {
			const serve = workflow.nodes.find((n) => n.name === 'Serve Console')!;
			(serve.parameters as Record<string, unknown>).consoleOptions = {
				operatorHeader: 'x-forwarded-user',
				teams: JSON.stringify({ maria: ['sales-ops'], lee: ['finance'] }),
			};
		});
		const { context: outsider, page: theirs } = await consolePage(browser, {
			'x-forwarded-user': 'lee',
		});
		try {
			await waitFor(
				'the console to name lee',
				async () => {
					await theirs.goto(consoleUrl(`?view=item&id=${id}`));
					return (await theirs.locator('b.operator').textContent()) === 'lee' ? true : undefined;
				},
				60_000,
				1_000,
			);
			expect(await theirs.locator('p.read-only').textContent()).toContain(
				'this item belongs to team sales-ops, and lee is in finance',
			);
			expect(await theirs.locator('form.action-replay').count()).toBe(0);
			expect(await theirs.locator('form.action-abandon').count()).toBe(0);
			await theirs.screenshot({ path: join(artifacts, '07-read-only.png'), fullPage: true });
		} finally {
			await outsider.close();
		}
		expect((await deadLetters(`id = ${Number(id)}`))[0].status).toBe('new');

		// Maria (sales-ops) replays it from the same page, once the CRM takes local numbers.
		demo.faults = { ...demo.faults, rejectLocalPhones: false };
		await page.goto(consoleUrl(`?view=item&id=${id}`));
		await page.waitForSelector('form.action-replay');
		await page.click('form.action-replay button');
		await page.waitForSelector('.flash.ok');
		await waitForStatus(id, 'replayed');
		const events = await adminQuery<{ actor: string; to_status: string }>(
			`SELECT actor, to_status FROM "${ctx!.schema}".dead_letter_events WHERE dead_letter_id = $1 ORDER BY id`,
			[id],
		);
		expect(events.map((e) => e.to_status)).toContain('replay_requested');
		expect(events.find((e) => e.to_status === 'replay_requested')!.actor).toBe('maria');
	});
});
