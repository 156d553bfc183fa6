-- Dead Letter Park: one row per parked item while it is open. Parking the same item again
-- (same workflow, step and item key) while it is open updates its counts and last failure.
CREATE TABLE :SCHEMA.dead_letters (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workflow_id text NOT NULL,
	workflow_name text,
	execution_id text,
	step text NOT NULL,
	item_index integer,
	-- The idempotency key when there is one, else a hash of the payload: what makes "the same item".
	item_key text NOT NULL,
	idempotency_key text,
	run_link text,
	integration text,
	error_class text NOT NULL,
	error_message text,
	error_status integer,
	attempts integer NOT NULL DEFAULT 1,
	failure_count integer NOT NULL DEFAULT 1,
	already_happened text,
	impact text,
	owner text,
	severity text NOT NULL DEFAULT 'normal',
	status text NOT NULL DEFAULT 'new'
		CHECK (status IN ('new', 'being_fixed', 'replay_requested', 'replayed', 'resolved', 'abandoned', 'held')),
	is_open boolean GENERATED ALWAYS AS (status IN ('new', 'being_fixed', 'replay_requested', 'held')) STORED,
	-- json, not jsonb: the payload comes back exactly as it was parked (key order, number text).
	payload json NOT NULL,
	retry_after timestamptz,
	first_failed_at timestamptz NOT NULL DEFAULT now(),
	last_failed_at timestamptz NOT NULL DEFAULT now(),
	parked_at timestamptz NOT NULL DEFAULT now(),
	closed_at timestamptz,
	updated_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX dead_letters_open_item ON :SCHEMA.dead_letters (workflow_id, step, item_key) WHERE is_open;
CREATE INDEX dead_letters_idempotency_key ON :SCHEMA.dead_letters (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX dead_letters_status_parked ON :SCHEMA.dead_letters (status, parked_at);
CREATE INDEX dead_letters_parked_at ON :SCHEMA.dead_letters (parked_at);
CREATE INDEX dead_letters_expires_at ON :SCHEMA.dead_letters (expires_at);

-- The audit trail, append-only: every status change with who, when, from, to and why.
CREATE TABLE :SCHEMA.dead_letter_events (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	dead_letter_id bigint NOT NULL REFERENCES :SCHEMA.dead_letters (id) ON DELETE CASCADE,
	at timestamptz NOT NULL DEFAULT now(),
	actor text NOT NULL,
	from_status text,
	to_status text NOT NULL,
	reason text
);
CREATE INDEX dead_letter_events_by_letter ON :SCHEMA.dead_letter_events (dead_letter_id, id);

-- Append-only: the store's own role may insert audit rows, never change or remove them
-- (rows leave only with their dead letter, by retention).
CREATE FUNCTION :SCHEMA.dead_letter_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the dead-letter audit trail is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER dead_letter_events_no_update BEFORE UPDATE ON :SCHEMA.dead_letter_events
	FOR EACH ROW EXECUTE FUNCTION :SCHEMA.dead_letter_events_append_only();
