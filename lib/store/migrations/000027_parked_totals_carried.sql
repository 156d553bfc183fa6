-- reliability_dead_letters_parked_total is a counter: it must never go down. It sums the daily
-- rollup, which Housekeeping purges after its retention (400 days by default), so the sum fell
-- by every purged day and Prometheus read that as a reset. The purge now carries what each day it
-- deletes had counted into this table, by workflow and step, and the counter adds it back.
CREATE TABLE :SCHEMA.dead_letter_parked_carried (
	workflow_id text NOT NULL,
	step text NOT NULL,
	parked bigint NOT NULL,
	PRIMARY KEY (workflow_id, step)
);
