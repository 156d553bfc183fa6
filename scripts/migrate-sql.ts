/**
 * `npm run migrate:sql [schema]`: prints the store's whole migration SQL, for DBAs who apply
 * schema changes by hand. The nodes then find the schema up to date and create nothing.
 */
import { DEFAULT_SCHEMA, migrationScript } from '../lib/store';

const schema = process.argv[2] ?? process.env.RELIABILITY_SCHEMA ?? DEFAULT_SCHEMA;
try {
	process.stdout.write(migrationScript(schema));
} catch (error) {
	process.stderr.write(
		`${error instanceof Error ? error.message : String(error)}${(error as { hint?: string }).hint ? `. ${(error as { hint?: string }).hint}` : ''}\n`,
	);
	process.exit(1);
}
