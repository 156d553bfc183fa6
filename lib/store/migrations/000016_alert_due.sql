-- A letter parked where no workflow runs after the park has its alert due: a stopped execution's
-- items (parked by Event Dedupe's end-of-execution hook) and a stopped write's routed failures
-- (no output of a stopped node runs, so no Alert follows). `alert_due` says since when; the
-- bundled Recover workflow takes such letters, clears it and sends their alerts, so each is
-- alerted once. Letters parked before this migration are left as they were.
ALTER TABLE :SCHEMA.dead_letters ADD COLUMN alert_due timestamptz;
CREATE INDEX dead_letters_alert_due ON :SCHEMA.dead_letters (alert_due) WHERE alert_due IS NOT NULL;
