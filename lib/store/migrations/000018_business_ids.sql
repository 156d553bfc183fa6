-- The business ID of what a record is about (an event ID, a record ID such as the lead's form
-- submission, an order number), beside the key that may hide it: a write keyed by business
-- identity stores a hash as its key, so without this "where is item X?" finds the item's claim
-- (done) but neither its failed write nor its open dead letter. Trace looks it up exactly.
ALTER TABLE :SCHEMA.idempotency_keys ADD COLUMN business_id text;
ALTER TABLE :SCHEMA.dead_letters ADD COLUMN business_id text;
CREATE INDEX idempotency_keys_by_business_id ON :SCHEMA.idempotency_keys (business_id)
	WHERE business_id IS NOT NULL;
CREATE INDEX dead_letters_by_business_id ON :SCHEMA.dead_letters (business_id)
	WHERE business_id IS NOT NULL;
