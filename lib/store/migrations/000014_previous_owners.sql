-- The executions that held an inbox claim before its current owner (a redelivery took a failed
-- claim, Recover took a crashed one), newest last, at most 16. The Error handler, run late for
-- one of them, then knows that the inbox kept its items (someone else has them now) and parks no
-- execution-level letter, which would alert about an item that is being done, or is done.
ALTER TABLE :SCHEMA.processed_events ADD COLUMN previous_executions text[] NOT NULL DEFAULT '{}';

CREATE INDEX processed_events_inbox_by_previous ON :SCHEMA.processed_events
	USING gin (previous_executions) WHERE payload IS NOT NULL OR payload_bytes IS NOT NULL;

-- 'ordering': Check Order dropped a claim that held a kept item (a redelivery or retry of an
-- event older than its entity's version): the row stays, done by that rule with its reason,
-- instead of being deleted with the only copy of the item.
ALTER TABLE :SCHEMA.processed_events DROP CONSTRAINT processed_events_completed_by_check;
ALTER TABLE :SCHEMA.processed_events ADD CONSTRAINT processed_events_completed_by_check
	CHECK (completed_by IN ('claim', 'complete', 'ordering'));
