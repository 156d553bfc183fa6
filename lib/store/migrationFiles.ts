import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The text of every file in ./migrations, by file name. This reads the source tree, for the
 * tests and scripts that run from it; the build replaces this module with the files' text
 * (gulpfile.js, `embedMigrations`), so the published nodes read nothing from disk.
 */
export function migrationFiles(): Record<string, string> {
	const dir = join(__dirname, 'migrations');
	return Object.fromEntries(
		readdirSync(dir)
			.sort()
			.map((file) => [file, readFileSync(join(dir, file), 'utf8')]),
	);
}
