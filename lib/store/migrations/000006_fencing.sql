-- Fencing: every claim carries a generation that a takeover increments, and every settle,
-- complete, release and status change is conditional on the generation its owner holds, so a
-- superseded owner cannot overwrite the new owner's result.

-- Idempotency keys. `unknown`: the request may have taken effect (a response lost after it was
-- sent, a dead owner); only reconciliation (same key, lookup, or a person) moves it on, never
-- expiry. attempt_started_at and attempt_timeout_ms say until when the last attempt may still be
-- in flight, so a taker does not look up or resend while it might still land.
ALTER TABLE :SCHEMA.idempotency_keys DROP CONSTRAINT idempotency_keys_status_check;
ALTER TABLE :SCHEMA.idempotency_keys ADD CONSTRAINT idempotency_keys_status_check
	CHECK (status IN ('in_progress', 'succeeded', 'failed', 'unknown'));
ALTER TABLE :SCHEMA.idempotency_keys
	ADD COLUMN generation bigint NOT NULL DEFAULT 1,
	ADD COLUMN attempt_started_at timestamptz,
	ADD COLUMN attempt_timeout_ms integer,
	-- Every attempt (time, class, status, delay chosen, message) and every observation a
	-- superseded owner made, newest last, capped.
	ADD COLUMN history jsonb NOT NULL DEFAULT '[]';
-- Records written by earlier versions as "in progress with the lease ended now" after a lost
-- response are unknown outcomes.
UPDATE :SCHEMA.idempotency_keys SET status = 'unknown'
WHERE status = 'in_progress' AND lease_until <= updated_at AND last_error IS NOT NULL;

-- Event claims. completed_by says how a done claim got there: 'claim' (done at claim, so a
-- failed execution's release frees it) or 'complete' (the work finished: never released).
ALTER TABLE :SCHEMA.processed_events
	ADD COLUMN generation bigint NOT NULL DEFAULT 1,
	ADD COLUMN completed_by text CHECK (completed_by IN ('claim', 'complete'));
UPDATE :SCHEMA.processed_events SET completed_by = 'claim' WHERE status = 'done';
-- Release and complete by execution touch done claims too: the partial index did not serve them.
DROP INDEX :SCHEMA.processed_events_open_by_execution;
CREATE INDEX processed_events_by_execution ON :SCHEMA.processed_events (execution_id);

-- Dead letters. A take (the Replay workflow) increments the generation and names its taker;
-- what it settles afterwards is conditional on that generation. hold_reason says what releases
-- a held record: the integration's resume ('pause') or the end of its breaker's cool-down
-- ('breaker').
ALTER TABLE :SCHEMA.dead_letters
	ADD COLUMN generation bigint NOT NULL DEFAULT 1,
	ADD COLUMN taken_by text,
	ADD COLUMN hold_reason text CHECK (hold_reason IN ('pause', 'breaker')),
	-- The status before a park updated the record, so the statement can write its audit event.
	ADD COLUMN previous_status text;
UPDATE :SCHEMA.dead_letters SET hold_reason = 'pause' WHERE status = 'held';

-- The audit trail is append-only for deletes too: an event leaves only with its dead letter
-- (retention), which the foreign key's cascade does after the dead letter row is gone.
CREATE FUNCTION :SCHEMA.dead_letter_events_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM :SCHEMA.dead_letters WHERE id = OLD.dead_letter_id) THEN
		RAISE EXCEPTION 'the dead-letter audit trail is append-only' USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN OLD;
END $$;
CREATE TRIGGER dead_letter_events_no_delete BEFORE DELETE ON :SCHEMA.dead_letter_events
	FOR EACH ROW EXECUTE FUNCTION :SCHEMA.dead_letter_events_keep();

-- A crashed execution's open keys are found by its execution ID.
CREATE INDEX idempotency_keys_open_by_execution ON :SCHEMA.idempotency_keys (execution_id)
	WHERE status = 'in_progress';
