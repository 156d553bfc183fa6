-- Transactional Outbox: messages written in the same transaction as the business change, sent
-- later by a relay. `id` is the sequence: order per (destination, ordering key) follows it.
-- A take moves a message to `in_flight` under a lease and increments `generation`; Complete and
-- Fail are conditional on (id, generation), so an owner whose lease was taken over cannot settle
-- the new owner's message. An expired lease makes the message takeable again.
CREATE TABLE :SCHEMA.outbox_messages (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	destination text NOT NULL,
	method text NOT NULL CHECK (method IN ('POST', 'PUT', 'PATCH', 'DELETE')),
	url text NOT NULL,
	headers json NOT NULL DEFAULT '{}',
	-- json, not jsonb: the body is sent exactly as it was written (key order, number text).
	body json,
	idempotency_key text NOT NULL,
	-- Hash of destination, method, URL, headers and body: the same key written again with other
	-- content is a conflict, with the same content a duplicate that adds nothing.
	fingerprint text NOT NULL,
	ordering_key text,
	status text NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'in_flight', 'done', 'dead')),
	generation integer NOT NULL DEFAULT 0,
	attempts integer NOT NULL DEFAULT 0,
	available_at timestamptz NOT NULL DEFAULT now(),
	lease_until timestamptz,
	taken_by text,
	taken_at timestamptz,
	last_error_class text,
	last_error text,
	last_error_status integer,
	dead_letter_id text,
	-- Settles refused because the generation had moved on: recorded, never silently dropped.
	superseded_count integer NOT NULL DEFAULT 0,
	last_superseded_at timestamptz,
	workflow_id text,
	execution_id text,
	node text,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	completed_at timestamptz,
	UNIQUE (destination, idempotency_key)
);

-- What Take scans: open messages by the time they become takeable.
CREATE INDEX outbox_messages_open ON :SCHEMA.outbox_messages (available_at, id)
	WHERE status IN ('pending', 'in_flight');
-- The "no earlier open message of the same ordering key" check.
CREATE INDEX outbox_messages_open_ordering ON :SCHEMA.outbox_messages (destination, ordering_key, id)
	WHERE status IN ('pending', 'in_flight') AND ordering_key IS NOT NULL;
CREATE INDEX outbox_messages_completed_at ON :SCHEMA.outbox_messages (completed_at)
	WHERE status IN ('done', 'dead');
