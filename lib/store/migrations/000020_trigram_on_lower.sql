-- Trace's search by a part of an ID is served by trigram indexes over the lowered ID, not over
-- the ID itself. pg_trgm's operator class also answers plain equality, and over the column the
-- planner took it for the lookups by ID the hot paths make (the claim statement's read of the
-- rows it did not claim, a letter by its key): each such lookup then read the index's pending
-- list, which grows with every insert until a vacuum, and a claim of 10,000 events over a
-- million stored took 20 s and more, run after run. Over lower(...) equality cannot use them;
-- the lookups by ID take the btree indexes, and the part search (lower(id) ILIKE pattern) the
-- trigram ones.
DROP INDEX IF EXISTS :SCHEMA.processed_events_event_id_trgm;
DROP INDEX IF EXISTS :SCHEMA.idempotency_keys_key_trgm;
DROP INDEX IF EXISTS :SCHEMA.dead_letters_idempotency_key_trgm;

DO $$
DECLARE
	trgm text;
BEGIN
	SELECT n.nspname INTO trgm FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'pg_trgm';
	IF trgm IS NOT NULL THEN
		EXECUTE format('CREATE INDEX processed_events_event_id_trgm ON :SCHEMA.processed_events USING gin (lower(event_id) %I.gin_trgm_ops)', trgm);
		EXECUTE format('CREATE INDEX idempotency_keys_key_trgm ON :SCHEMA.idempotency_keys USING gin (lower(key) %I.gin_trgm_ops)', trgm);
		EXECUTE format('CREATE INDEX dead_letters_idempotency_key_trgm ON :SCHEMA.dead_letters USING gin (lower(idempotency_key) %I.gin_trgm_ops) WHERE idempotency_key IS NOT NULL', trgm);
	END IF;
END $$;
