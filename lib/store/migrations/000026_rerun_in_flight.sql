-- Recover re-runs the items it took one at a time, each through its workflow in an execution of
-- its own, under the recovery run's. `rerun_at` marks the item whose re-run the recovery run has
-- just started: a sub-workflow that claims inside that re-run learns from it which of the run's
-- items it is part of (the run holds many), and records the re-run's execution as one of that
-- item's runs, so the item's letter or its next recovery stands for the sub-workflow's claim.
ALTER TABLE :SCHEMA.processed_events ADD COLUMN rerun_at timestamptz;
