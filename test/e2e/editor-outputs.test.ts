import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEFAULT_OWNER } from '../../dev/harness/rest';
import type { WorkflowFile } from '../../dev/harness/n8n';
import { n8nVersionsUnderTest, REPO_ROOT } from '../../dev/harness/paths';
import { launchChromium } from '../helpers/chromium';
import { bundledWorkflows, SHIPPED_DEMO_URL } from '../../dev/bundled';
import { type E2eContext, startWithPackage, stopAndClean } from './fixtures';

/**
 * Every bundled workflow opened in the n8n editor (headless Chromium, signed in as the owner):
 * each connection of the workflow must leave its node from an output handle the editor draws.
 * A node that declares fewer outputs than it returns shows fewer handles, and the editor then
 * hangs the other connections from the node's body, where a user can neither see which output
 * they belong to nor connect a new one. Screenshots go to test/artifacts/.
 */
jest.setTimeout(600_000);

type Connections = Record<string, { main?: Array<Array<{ node: string }> | null> }>;

/** Each connected main output of the workflow: the node, the output index and where it goes. */
function connectedOutputs(workflow: WorkflowFile) {
	return Object.entries(workflow.connections as Connections).flatMap(([node, types]) =>
		(types.main ?? []).flatMap((targets, index) =>
			targets?.length ? [{ node, index, to: targets.map((t) => t.node) }] : [],
		),
	);
}

const attr = (value: string | number): string => JSON.stringify(String(value));

const workflows = bundledWorkflows(SHIPPED_DEMO_URL);

let browser: Browser;
beforeAll(async () => {
	browser = await launchChromium();
});
afterAll(async () => {
	await browser?.close();
});

describe.each(n8nVersionsUnderTest())('the bundled workflows in the n8n %s editor', (version) => {
	let ctx: E2eContext | undefined;
	let context: BrowserContext;
	let page: Page;
	const artifacts = join(REPO_ROOT, 'test', 'artifacts', `editor-${version}`);

	beforeAll(async () => {
		mkdirSync(artifacts, { recursive: true });
		ctx = await startWithPackage(version, 'editor', workflows, [], []);
		context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
		// The editor's own sign-in request: the session cookie lands in the browser context.
		const login = await context.request.post(`${ctx.n8n.baseUrl}/rest/login`, {
			data: {
				email: DEFAULT_OWNER.email,
				emailOrLdapLoginId: DEFAULT_OWNER.email,
				password: DEFAULT_OWNER.password,
			},
		});
		expect(login.status()).toBe(200);
		page = await context.newPage();
	});

	afterAll(async () => {
		await context?.close();
		await stopAndClean(ctx);
	});

	it.each(workflows.map((w) => [w.name, w] as const))(
		'%s: every connection leaves from an output the editor shows',
		async (_name, workflow) => {
			const outputs = connectedOutputs(workflow);
			expect(outputs.length).toBeGreaterThan(0);
			// The canvas may draw a node before its type's description has arrived (n8n 1.x), so
			// each connected output gets time to appear; one that the editor never draws does not.
			await page.goto(`${ctx!.n8n.baseUrl}/workflow/${workflow.id}`, { waitUntil: 'networkidle' });
			for (const node of new Set(outputs.map((o) => o.node)))
				await page
					.locator(`[data-test-id="canvas-node"][data-node-name=${attr(node)}]`)
					.waitFor({ timeout: 60_000 });
			const hanging: string[] = [];
			for (const { node, index, to } of outputs) {
				const handle = page.locator(
					`[data-test-id="canvas-node-output-handle"][data-node-name=${attr(node)}][data-connection-type="main"][data-index=${attr(index)}]`,
				);
				const drawn = await handle
					.first()
					.waitFor({ state: 'attached', timeout: 10_000 })
					.then(() => true)
					.catch(() => false);
				if (!drawn) {
					const shown = await page
						.locator(
							`[data-test-id="canvas-node-output-handle"][data-node-name=${attr(node)}][data-connection-type="main"]`,
						)
						.count();
					hanging.push(
						`${node}: output ${index} (to ${to.join(', ')}) is connected, the editor shows ${shown} output${shown === 1 ? '' : 's'}`,
					);
				}
			}
			await page.screenshot({ path: join(artifacts, `${workflow.id}.png`) });
			expect(hanging).toEqual([]);
		},
	);
});
