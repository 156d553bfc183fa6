import type { SqlQuery } from '../store';

/**
 * What the credential's test needs to know of the server and of `schema`: its version, who we
 * are, in which database, whether the schema exists, and whether we may create it or create in
 * it. No Store exists yet (the test connects once, alone), so the schema is a value, not a name.
 */
export const storeAccessSql = (input: { schema: string }): SqlQuery => ({
	text: `
SELECT current_setting('server_version') AS version,
       current_user AS user,
       current_database() AS database,
       EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema_exists,
       has_database_privilege(current_database(), 'CREATE') AS can_create_schema,
       CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)
            THEN has_schema_privilege($1, 'CREATE') END AS can_create_in_schema`,
	values: [input.schema],
});
