import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TestTarget } from '../../dev/target/server';
import { bundledWorkflows, SHIPPED_DEMO_URL } from '../../dev/bundled';
import { n8nVersionsUnderTest, REPO_ROOT } from '../../dev/harness/paths';
import { Store } from '../../lib/store';
import { consoleCredentials, consolePage, launchChromium } from '../helpers/chromium';
import { storeConfig } from '../helpers/store';
import { seedTracedItems, TRACED, WORKFLOW_ID } from '../helpers/traceItems';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * "Where is item X?" in headless Chromium against real n8n: the bundled console workflow,
 * signed in through the webhook's Basic Auth, searched for an invoice in flight, one done, one
 * parked and one whose execution crashed. Screenshots go to test/artifacts/.
 */
jest.setTimeout(600_000);

const CONSOLE = 'relOperatorConsole';

const target = new TestTarget();
let browser: Browser;
beforeAll(async () => {
	await target.start();
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
	await target.stop();
});

describe.each(n8nVersionsUnderTest())('Find an item in the console of n8n %s', (version) => {
	let ctx: E2eContext | undefined;
	let context: BrowserContext;
	let page: Page;
	const artifacts = join(REPO_ROOT, 'test', 'artifacts', `trace-console-${version}`);

	beforeAll(async () => {
		mkdirSync(artifacts, { recursive: true });
		ctx = await startWithPackage(
			version,
			'trace',
			bundledWorkflows(SHIPPED_DEMO_URL),
			consoleCredentials(),
			// n8n 2.x publishes the console only once Replay, which it calls, is published.
			Number(version.split('.')[0]) >= 2 ? ['relReplayWorkflow', CONSOLE] : [CONSOLE],
		);
		// The items are made by the engine in the same store the console reads.
		const store = new Store(storeConfig(ctx.schema));
		try {
			await seedTracedItems(store, target, `exec-${version}`);
		} finally {
			await store.close();
		}
		({ context, page } = await consolePage(browser));
	});

	afterAll(async () => {
		await context?.close();
		await stopAndClean(ctx);
	});

	/** Types the ID into the one search box, as an operator would, and waits for the answer. */
	async function search(id: string): Promise<void> {
		await page.goto(`${ctx!.n8n.baseUrl}/webhook/reliability-console`);
		await page.click('header nav a:has-text("Find an item")');
		await page.fill('form.trace-search input[name=q]', id);
		await page.click('form.trace-search button');
		await page.waitForSelector('p.summary, p.nothing');
	}
	const summaryState = async () => (await page.locator('p.summary .state').textContent())?.trim();
	const states = async (kind: string) =>
		await page
			.locator(`tr.entry[data-kind="${kind}"]`)
			.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-state')));
	const executionLink = (execution: string) =>
		`${ctx!.n8n.baseUrl}/workflow/${WORKFLOW_ID}/executions/${execution}`;

	it('an invoice in flight: its claim is held by the running execution', async () => {
		await search(TRACED.inFlight);
		expect(await summaryState()).toBe('in flight');
		expect(await states('claim')).toEqual(['in_flight']);
		expect(await states('write')).toEqual(['done']);
		expect(
			await page
				.locator('tr.entry[data-kind="claim"] a.execution-link')
				.first()
				.getAttribute('href'),
		).toBe(executionLink(`exec-${version}-1`));
		await page.screenshot({ path: join(artifacts, '01-in-flight.png'), fullPage: true });
	});

	it('an invoice done: claim done, ledger post succeeded with its saved response', async () => {
		await search(TRACED.done);
		expect(await summaryState()).toBe('done');
		expect(await states('claim')).toEqual(['done']);
		expect(await page.locator('tr.entry[data-kind="write"]').textContent()).toContain(
			'saved response 201',
		);
	});

	it('a parked invoice, its ID typed in lower case: the dead letter links to its page', async () => {
		await search(TRACED.parked.toLowerCase());
		expect(await summaryState()).toBe('parked');
		expect(await states('dead_letter')).toEqual(['parked']);
		await page.screenshot({ path: join(artifacts, '02-parked.png'), fullPage: true });
		await page.click('a.dead-letter-link');
		await page.waitForSelector('pre.payload');
		expect(await page.locator('code.key').textContent()).toBe(`${TRACED.parked}:post`);
		expect(await page.locator('dd.error-message').textContent()).toContain(
			'account 4711 is closed',
		);
	});

	it('an invoice whose execution crashed: the claim shows crashed, with the crash message', async () => {
		await search(TRACED.crashed);
		expect(await summaryState()).toBe('crashed');
		expect(await states('claim')).toEqual(['crashed']);
		expect(await page.locator('tr.entry[data-kind="claim"]').textContent()).toContain(
			'Workflow did not finish',
		);
		await page.screenshot({ path: join(artifacts, '03-crashed.png'), fullPage: true });
	});

	it('an ID nobody has seen says so, and what is typed is shown as text', async () => {
		await search('INV-<script>alert(1)</script>');
		expect(await page.locator('p.nothing').textContent()).toContain('INV-<script>');
		expect(await page.locator('input[name=q]').inputValue()).toBe('INV-<script>alert(1)</script>');
	});
});
