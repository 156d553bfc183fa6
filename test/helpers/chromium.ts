import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

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
