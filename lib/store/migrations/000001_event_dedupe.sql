-- Event Dedupe: one row per (consumer, event id). A claim is `in_progress` with a lease and is
-- owned by the n8n execution that made it; `done` once that execution completes it. Rows are
-- purged after expires_at, so the history never fills up.
CREATE TABLE :SCHEMA.processed_events (
	consumer text NOT NULL,
	event_id text NOT NULL,
	status text NOT NULL CHECK (status IN ('in_progress', 'done')),
	workflow_id text,
	execution_id text,
	claimed_at timestamptz NOT NULL DEFAULT now(),
	lease_until timestamptz NOT NULL,
	completed_at timestamptz,
	expires_at timestamptz NOT NULL,
	entity_key text,
	version numeric,
	PRIMARY KEY (consumer, event_id)
);

-- Release by execution id (the error workflow) touches only that execution's open claims.
CREATE INDEX processed_events_open_by_execution
	ON :SCHEMA.processed_events (execution_id)
	WHERE status = 'in_progress';

-- Purge by retention walks this index instead of the table.
CREATE INDEX processed_events_expires_at ON :SCHEMA.processed_events (expires_at);

-- Ordering: the highest version of each entity that has been claimed and not released. The
-- previous value is kept so that releasing a failed execution's claim restores it.
CREATE TABLE :SCHEMA.entity_versions (
	consumer text NOT NULL,
	entity_key text NOT NULL,
	version numeric NOT NULL,
	previous_version numeric,
	event_id text NOT NULL,
	execution_id text,
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (consumer, entity_key)
);
