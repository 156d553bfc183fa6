-- Fire drill mode, per integration: while a row's expires_at is ahead, the integration is in a
-- drill (started from the console, at most an hour, ended by its expiry or by a person). An armed
-- forced timeout (timeout_armed) makes the next write of the drill's event that the target answers
-- with a success discard that answer, as a timeout after commit would; the write that took it is
-- recorded (fired_*), so the drill's report can follow it to its record.
CREATE TABLE :SCHEMA.drills (
	integration text PRIMARY KEY,
	started_by text NOT NULL,
	reason text,
	started_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	timeout_armed boolean NOT NULL DEFAULT false,
	armed_at timestamptz,
	-- What the armed timeout may hit: only a write whose key or business ID carries this event's
	-- value (the drill's own event), and only until armed_until, so a live write of the same
	-- integration, or an arming whose drill run died, never takes it.
	armed_for text,
	armed_until timestamptz,
	fired_at timestamptz,
	fired_scope text,
	fired_key text,
	fired_execution text
);

-- The drill's audit trail: every start, stop, arming and firing, with who and why.
CREATE TABLE :SCHEMA.drill_events (
	id bigserial PRIMARY KEY,
	integration text NOT NULL,
	action text NOT NULL,
	actor text NOT NULL,
	reason text,
	at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX drill_events_integration_at ON :SCHEMA.drill_events (integration, at);
