-- Each failed, crashed or stopped execution is settled once. n8n may report a crashed execution
-- again at its next restart and run the error workflow a second time; by then its items may be
-- done (a redelivery, Recover). The first settlement is recorded here, and a repeated report
-- settles, parks and alerts nothing. A stopped (cancelled) execution is settled by its own
-- end-of-execution hook, which records it too, so an error workflow run later for it is a repeat.
CREATE TABLE :SCHEMA.execution_reports (
	execution_id text PRIMARY KEY,
	-- How it ended, as settled: failed, crashed or stopped.
	ending text NOT NULL CHECK (ending IN ('failed', 'crashed', 'stopped')),
	reports integer NOT NULL DEFAULT 1,
	first_reported_at timestamptz NOT NULL DEFAULT now(),
	last_reported_at timestamptz NOT NULL DEFAULT now()
);

-- Housekeeping removes reports older than the retention, oldest first.
CREATE INDEX execution_reports_age ON :SCHEMA.execution_reports (first_reported_at);
