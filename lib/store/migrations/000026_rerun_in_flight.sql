-- Recover re-runs the items it took one at a time, each through its workflow in an execution of
-- its own (the re-run), under the recovery run's. A sub-workflow that claims inside a re-run
-- learns from these which of the recovery run's items it is part of (the run holds many), and
-- records the re-run as one of that item's runs, so the item's letter or its next recovery
-- stands for the sub-workflow's claim.
ALTER TABLE :SCHEMA.processed_events
	-- When the recovery run that holds the item started its re-run: the latest is the one under way.
	ADD COLUMN rerun_at timestamptz,
	-- The item's latest re-run's execution, recorded as it returns (or by the first claim of a
	-- sub-workflow inside it): a sub-workflow that claims after the recovery run moved on (one it
	-- did not wait for) still finds its item.
	ADD COLUMN rerun_execution text;
CREATE INDEX processed_events_by_rerun ON :SCHEMA.processed_events (rerun_execution)
	WHERE rerun_execution IS NOT NULL;
