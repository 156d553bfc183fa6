-- The complete dead-letter record: what a person needs once the attempts have stopped.

-- Every attempt the write made for the parked item (time, class, status, delay chosen before
-- the next attempt, masked message), copied from its key record when parked, so the record
-- keeps it after the key record is purged. A later park of the same open item appends.
ALTER TABLE :SCHEMA.dead_letters
	ADD COLUMN attempt_history jsonb NOT NULL DEFAULT '[]',
	-- The workflow's version at the latest failure: a version ID the caller supplied, or
	-- `fingerprint:<sha256>` of the nodes the parking node could see.
	ADD COLUMN source_version text;

-- The version last seen at a step, to say on an older record that the workflow changed since.
CREATE INDEX dead_letters_source_version ON :SCHEMA.dead_letters (workflow_id, step, last_failed_at DESC)
	WHERE source_version IS NOT NULL;

-- Compensation. A key record keeps the step's compensating action (a request template filled in
-- from its saved response, or a manual repair plan) and the item it belongs to, so the steps an
-- item had already taken can be found when a later step parks it.
ALTER TABLE :SCHEMA.idempotency_keys
	ADD COLUMN item_ref text,
	ADD COLUMN compensation jsonb;
CREATE INDEX idempotency_keys_by_item ON :SCHEMA.idempotency_keys (workflow_id, item_ref)
	WHERE item_ref IS NOT NULL AND status = 'succeeded';

-- The steps that took effect before the item was parked (key, step, saved response,
-- compensation), oldest first; and `compensated`, a closed status: every step was reversed.
ALTER TABLE :SCHEMA.dead_letters ADD COLUMN steps jsonb NOT NULL DEFAULT '[]';
ALTER TABLE :SCHEMA.dead_letters DROP CONSTRAINT dead_letters_status_check;
ALTER TABLE :SCHEMA.dead_letters ADD CONSTRAINT dead_letters_status_check
	CHECK (status IN ('new', 'being_fixed', 'replay_requested', 'replayed', 'resolved', 'abandoned', 'held', 'compensated'));
