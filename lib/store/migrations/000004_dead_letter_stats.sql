-- Stats without loading rows. History (parked per day, top reasons, time to resolution) comes
-- from a daily rollup that statement-level triggers keep in step with dead_letters; the open
-- queue (by status, workflow, step, owner; oldest and median wait) from a covering partial
-- index over open records only. Both stay small however many closed records are kept.
CREATE TABLE :SCHEMA.dead_letter_daily (
	day date NOT NULL,
	workflow_id text NOT NULL,
	step text NOT NULL,
	owner text NOT NULL,
	reason text NOT NULL,
	parked integer NOT NULL DEFAULT 0,
	closed integer NOT NULL DEFAULT 0,
	-- numeric, not float: counts move back and forth with updates and must come back exact.
	closed_seconds numeric NOT NULL DEFAULT 0,
	PRIMARY KEY (day, workflow_id, step, owner, reason)
);

-- Each statement's rows are folded in at once: +1 for the rows as they are now, -1 for the
-- rows as they were (updates), so a change of status, reason or park time moves the counts.
-- Deleted (purged) records stay counted: the rollup is the history.
CREATE FUNCTION :SCHEMA.dead_letter_daily_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO :SCHEMA.dead_letter_daily AS d (day, workflow_id, step, owner, reason, parked, closed, closed_seconds)
		SELECT (parked_at AT TIME ZONE 'UTC')::date, workflow_id, step, coalesce(owner, ''), left(coalesce(error_message, error_class), 200),
		       count(*), count(closed_at), coalesce(sum(extract(epoch FROM closed_at - parked_at)), 0)
		FROM new_rows GROUP BY 1, 2, 3, 4, 5
		ON CONFLICT (day, workflow_id, step, owner, reason) DO UPDATE SET
			parked = d.parked + EXCLUDED.parked, closed = d.closed + EXCLUDED.closed, closed_seconds = d.closed_seconds + EXCLUDED.closed_seconds;
	ELSE
		INSERT INTO :SCHEMA.dead_letter_daily AS d (day, workflow_id, step, owner, reason, parked, closed, closed_seconds)
		SELECT day, workflow_id, step, owner, reason, sum(parked), sum(closed), sum(closed_seconds)
		FROM (
			SELECT (parked_at AT TIME ZONE 'UTC')::date AS day, workflow_id, step, coalesce(owner, '') AS owner, left(coalesce(error_message, error_class), 200) AS reason,
			       1 AS parked, (closed_at IS NOT NULL)::int AS closed, coalesce(extract(epoch FROM closed_at - parked_at), 0) AS closed_seconds
			FROM new_rows
			UNION ALL
			SELECT (parked_at AT TIME ZONE 'UTC')::date, workflow_id, step, coalesce(owner, ''), left(coalesce(error_message, error_class), 200),
			       -1, -(closed_at IS NOT NULL)::int, -coalesce(extract(epoch FROM closed_at - parked_at), 0)
			FROM old_rows
		) change
		GROUP BY 1, 2, 3, 4, 5
		HAVING sum(parked) <> 0 OR sum(closed) <> 0 OR sum(closed_seconds) <> 0
		ON CONFLICT (day, workflow_id, step, owner, reason) DO UPDATE SET
			parked = d.parked + EXCLUDED.parked, closed = d.closed + EXCLUDED.closed, closed_seconds = d.closed_seconds + EXCLUDED.closed_seconds;
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER dead_letter_daily_on_insert AFTER INSERT ON :SCHEMA.dead_letters
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION :SCHEMA.dead_letter_daily_apply();
CREATE TRIGGER dead_letter_daily_on_update AFTER UPDATE ON :SCHEMA.dead_letters
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION :SCHEMA.dead_letter_daily_apply();

-- The open queue, readable from the index alone.
CREATE INDEX dead_letters_open_cover ON :SCHEMA.dead_letters (status, workflow_id, step, owner, parked_at) WHERE is_open;
