-- Idempotent HTTP Write: one record per (scope, key). Claimed `in_progress` under a lease before
-- the first attempt; `succeeded` with the saved response; `failed` when the target definitely
-- did nothing (claimable again, with a new fingerprint: the fix-and-replay path). A lease that
-- expires while in progress means the outcome is unknown and is reconciled before any resend.
CREATE TABLE :SCHEMA.idempotency_keys (
	scope text NOT NULL,
	key text NOT NULL,
	fingerprint text NOT NULL,
	status text NOT NULL CHECK (status IN ('in_progress', 'succeeded', 'failed')),
	lease_until timestamptz NOT NULL,
	workflow_id text,
	execution_id text,
	node text,
	attempts integer NOT NULL DEFAULT 0,
	response_status integer,
	response_headers json,
	response_body text,
	response_truncated boolean NOT NULL DEFAULT false,
	last_error text,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	completed_at timestamptz,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expires_at ON :SCHEMA.idempotency_keys (expires_at);

-- Circuit breakers per integration, shared by every worker.
CREATE TABLE :SCHEMA.breakers (
	integration text PRIMARY KEY,
	consecutive_failures integer NOT NULL DEFAULT 0,
	open_until timestamptz,
	updated_at timestamptz NOT NULL DEFAULT now()
);
