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
