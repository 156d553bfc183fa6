-- A key whose effect Compensate reversed is `compensated`: terminal like `succeeded`, but its
-- saved response describes a resource that no longer exists, so a later run with the key is
-- refused (naming when, by whom and for which dead letter) instead of answered from it. Past its
-- retention it is a new operation, as a succeeded key is.
ALTER TABLE :SCHEMA.idempotency_keys DROP CONSTRAINT idempotency_keys_status_check;
ALTER TABLE :SCHEMA.idempotency_keys ADD CONSTRAINT idempotency_keys_status_check
	CHECK (status IN ('in_progress', 'succeeded', 'failed', 'unknown', 'compensated'));
ALTER TABLE :SCHEMA.idempotency_keys
	ADD COLUMN compensated_at timestamptz,
	ADD COLUMN compensated_by text,
	-- The dead letter whose Compensate reversed it.
	ADD COLUMN compensated_for text;
