-- The durable inbox. A claim made "until the execution ends" keeps the event's item (masked,
-- size-capped), so when n8n or a worker dies after answering the sender, the item still exists:
-- the Recover workflow re-runs it (recover_attempts counts the tries) or parks it. `failed`: the
-- execution ended in an error; the item waits for a redelivery (which claims it again) or for
-- the error workflow, which parks it with its payload.
ALTER TABLE :SCHEMA.processed_events DROP CONSTRAINT processed_events_status_check;
ALTER TABLE :SCHEMA.processed_events ADD CONSTRAINT processed_events_status_check
	CHECK (status IN ('in_progress', 'done', 'failed'));
ALTER TABLE :SCHEMA.processed_events
	ADD COLUMN payload json,
	-- The item was over the inbox cap: it is not kept, and everything that reads it says so.
	ADD COLUMN payload_bytes integer,
	ADD COLUMN recover_attempts integer NOT NULL DEFAULT 0,
	ADD COLUMN last_error text,
	-- The execution whose claim this is (a recovery takes the claim over but keeps this): the run
	-- link a parked crash shows, and the execution whose write keys say what already happened.
	ADD COLUMN origin_execution_id text;

-- The error workflow finds what the inbox kept for a failed execution, whoever holds it now.
CREATE INDEX processed_events_inbox_by_origin ON :SCHEMA.processed_events (origin_execution_id)
	WHERE payload IS NOT NULL OR payload_bytes IS NOT NULL;

-- Recover finds claims whose owner is gone (lease ended, still in progress) without a scan.
CREATE INDEX processed_events_lapsed ON :SCHEMA.processed_events (lease_until) WHERE status = 'in_progress';
