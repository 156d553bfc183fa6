-- Trace ("where is item X?"): an item is found by its business ID in every table that holds it,
-- exactly (btree) or by a part of its ID (trigram GIN, which serves ILIKE '%part%'), without a
-- scan of tables with millions of rows.

-- Exact: the primary keys lead with consumer and scope, so they cannot find an ID alone.
CREATE INDEX processed_events_by_event_id ON :SCHEMA.processed_events (event_id);
CREATE INDEX idempotency_keys_by_key ON :SCHEMA.idempotency_keys (key);
-- dead_letters (idempotency_key) exists since 000002.

-- Parts: pg_trgm, in whichever schema it is installed (it is database-wide). It is a trusted
-- extension (Postgres 13+), so a role that may create in the database can install it; a role that
-- may not, or a server without it, gets prefix indexes instead, and a search by a part that is
-- not a prefix then reads the tables.
DO $$
DECLARE
	trgm text;
BEGIN
	SELECT n.nspname INTO trgm FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'pg_trgm';
	IF trgm IS NULL THEN
		BEGIN
			CREATE EXTENSION IF NOT EXISTS pg_trgm;
		EXCEPTION
			-- Not allowed, not installed on the server, or created by a concurrent migration of
			-- another schema (which is as good).
			WHEN insufficient_privilege OR undefined_file OR feature_not_supported
			     OR unique_violation OR duplicate_object THEN NULL;
		END;
		SELECT n.nspname INTO trgm FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'pg_trgm';
	END IF;
	IF trgm IS NOT NULL THEN
		EXECUTE format('CREATE INDEX processed_events_event_id_trgm ON :SCHEMA.processed_events USING gin (event_id %I.gin_trgm_ops)', trgm);
		EXECUTE format('CREATE INDEX idempotency_keys_key_trgm ON :SCHEMA.idempotency_keys USING gin (key %I.gin_trgm_ops)', trgm);
		EXECUTE format('CREATE INDEX dead_letters_idempotency_key_trgm ON :SCHEMA.dead_letters USING gin (idempotency_key %I.gin_trgm_ops) WHERE idempotency_key IS NOT NULL', trgm);
	ELSE
		CREATE INDEX processed_events_event_id_prefix ON :SCHEMA.processed_events (event_id text_pattern_ops);
		CREATE INDEX idempotency_keys_key_prefix ON :SCHEMA.idempotency_keys (key text_pattern_ops);
		CREATE INDEX dead_letters_idempotency_key_prefix ON :SCHEMA.dead_letters (idempotency_key text_pattern_ops)
			WHERE idempotency_key IS NOT NULL;
	END IF;
END $$;
