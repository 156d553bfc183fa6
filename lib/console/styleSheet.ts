import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's stylesheet, ./console.css, with LF line ends (a browser hashes an inline style
 * after turning CRLF into LF, so a CRLF checkout must not change the CSP hash). This reads the
 * source tree, for the tests and scripts that run from it; the build replaces this module with
 * the file's text (gulpfile.js, `embedFiles`), so the published nodes read nothing from disk.
 */
export function styleSheet(): string {
	return readFileSync(join(__dirname, 'console.css'), 'utf8').replace(/\r\n?/g, '\n');
}
