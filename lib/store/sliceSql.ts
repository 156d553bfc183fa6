/**
 * The tail every purge slice statement ends with: `doomed`, the CTE before it, picks and locks
 * the rows of `table`; they are deleted by their ctid, and the statement answers with how many it
 * picked and how many it deleted (`SliceResult`; see `deleteInSlices`). An ordered pick (one that
 * walks an index on its retention column, `ORDER BY` it, from `afterSql`) also selects that column
 * as `at`, and the statement answers with the last value it picked as `next`, where the purge's
 * next slice starts: the index entries of the rows this slice deleted stay until vacuum, and a
 * pick that started from the front each time would walk them all again, slice after slice.
 * `next` is JSON's rendering of the value (ISO 8601 with its offset), which reads back the same
 * whatever the session's DateStyle and TimeZone; `::text` follows DateStyle, and under some of
 * them reads back hours off or not at all.
 */
export const deleteDoomed = (table: string, ordered = false): string => `,
gone AS (DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1)
SELECT (SELECT count(*) FROM doomed)::int AS picked, (SELECT count(*) FROM gone)::int AS deleted${
	ordered ? `, to_json((SELECT max(at) FROM doomed)) #>> '{}' AS next` : ''
}`;

/**
 * An ordered pick's lower bound on `column` (of `type`): from where the previous slice ended
 * (`$n`, its `next`), or from the start for the first slice (null).
 */
export const afterSql = (column: string, param: number, type: 'timestamptz' | 'date'): string =>
	`${column} >= COALESCE($${param}::${type}, '-infinity'::${type})`;
