/**
 * The tail every purge slice statement ends with: `doomed`, the CTE before it, picks and locks
 * the rows of `table`; they are deleted by their ctid, and the statement answers with how many it
 * picked and how many it deleted (`SliceResult`; see `deleteInSlices`).
 */
export const deleteDoomed = (table: string): string => `,
gone AS (DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1)
SELECT (SELECT count(*) FROM doomed)::int AS picked, (SELECT count(*) FROM gone)::int AS deleted`;
