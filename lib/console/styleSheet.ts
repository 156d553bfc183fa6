import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's stylesheet, ./console.css. This reads the source tree, for the tests and scripts
 * that run from it; the build replaces this module with the file's text (gulpfile.js,
 * `embedFiles`), so the published nodes read nothing from disk.
 */
export function styleSheet(): string {
	return readFileSync(join(__dirname, 'console.css'), 'utf8');
}
