-- The operator console's signing secret: one random value per schema, written by the first
-- process that needs it (INSERT ... ON CONFLICT DO NOTHING, so concurrent workers agree on one)
-- and read once per process. Form tokens are HMACs with it, bound to the operator and the hour,
-- so a page on another site cannot compute one from what it knows about the operator.
CREATE TABLE :SCHEMA.console_secret (
	id boolean PRIMARY KEY DEFAULT true CHECK (id),
	secret bytea NOT NULL CHECK (octet_length(secret) >= 32),
	created_at timestamptz NOT NULL DEFAULT now()
);
