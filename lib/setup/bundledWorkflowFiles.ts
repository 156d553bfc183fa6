import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The text of every bundled workflow (the repository's and the package's `workflows/*.json`), by
 * file name. This reads the source tree, for the tests and scripts that run from it; the build
 * replaces this module with the files' text (gulpfile.js, `embedFiles`), so Setup reads nothing
 * from disk in n8n, wherever the package was installed.
 */
export function bundledWorkflowFiles(): Record<string, string> {
	const dir = join(__dirname, '..', '..', 'workflows');
	return Object.fromEntries(
		readdirSync(dir)
			.filter((file) => file.endsWith('.json'))
			.sort()
			.map((file) => [file, readFileSync(join(dir, file), 'utf8')]),
	);
}
