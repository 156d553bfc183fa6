import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { CredentialFile } from '../../dev/harness/n8n';

/**
 * Headless Chromium for the browser tests: Debian's `chromium` found on PATH (CHROMIUM_PATH
 * points elsewhere), driven through playwright-core, with nothing that reaches the network on
 * its own (background updates, sync, component downloads).
 */
function chromiumPath(): string {
	if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
	for (const dir of (process.env.PATH ?? '').split(delimiter)) {
		const candidate = join(dir, 'chromium');
		try {
			accessSync(candidate, constants.X_OK);
			return candidate;
		} catch {
			/* not in this directory */
		}
	}
	throw new Error(
		"No chromium on PATH: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH.",
	);
}

const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-dev-shm-usage',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--no-first-run',
];

export async function launchChromium(): Promise<Browser> {
	return await chromium.launch({
		executablePath: chromiumPath(),
		headless: true,
		args: CHROMIUM_ARGS,
	});
}

/** The operator the console tests sign in as (the webhook's Basic Auth credential). */
export const CONSOLE_OPERATOR = { username: 'maria', password: 'console-pass-1' };

/**
 * The credentials the bundled console and metrics workflows refer to: the console's Basic Auth
 * login for CONSOLE_OPERATOR and the metrics endpoint's bearer token.
 */
export function consoleCredentials(metricsToken = 'unused'): CredentialFile[] {
	return [
		{
			id: 'reliabilityConsoleLogin',
			name: 'Reliability console login',
			type: 'httpBasicAuth',
			data: { user: CONSOLE_OPERATOR.username, password: CONSOLE_OPERATOR.password },
		},
		{
			id: 'reliabilityMetricsToken',
			name: 'Reliability metrics token',
			type: 'httpHeaderAuth',
			data: { name: 'Authorization', value: `Bearer ${metricsToken}` },
		},
	];
}

/**
 * A signed-in console page: a browser context with the operator's Basic Auth (and any headers a
 * signing-in proxy would add), where a script that runs in the page (a dialog) fails the test.
 */
export async function consolePage(
	browser: Browser,
	headers: Record<string, string> = {},
): Promise<{ context: BrowserContext; page: Page }> {
	const context = await browser.newContext({
		httpCredentials: CONSOLE_OPERATOR,
		extraHTTPHeaders: headers,
		viewport: { width: 1280, height: 900 },
	});
	const page = await context.newPage();
	page.on('dialog', (dialog) => {
		throw new Error(`a script ran in the console page: dialog "${dialog.message()}"`);
	});
	return { context, page };
}
