-- Operator controls. Pauses: one row per paused-or-resumed integration or workflow, with who
-- changed it last and why; every change is also appended to pause_events.
CREATE TABLE :SCHEMA.pauses (
	scope text NOT NULL CHECK (scope IN ('integration', 'workflow')),
	name text NOT NULL,
	paused boolean NOT NULL,
	changed_by text NOT NULL,
	reason text,
	changed_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (scope, name)
);

CREATE TABLE :SCHEMA.pause_events (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	scope text NOT NULL,
	name text NOT NULL,
	paused boolean NOT NULL,
	actor text NOT NULL,
	reason text,
	at timestamptz NOT NULL DEFAULT now()
);

-- Held items are found by integration when it resumes.
CREATE INDEX dead_letters_held_by_integration ON :SCHEMA.dead_letters (integration) WHERE status = 'held';

-- Heartbeats: a scheduled workflow beats; a watch compares the last beat with the expected
-- period (or cron) plus grace. reported_state is what the watch last reported, so each change
-- (late, down, up again) is reported once.
CREATE TABLE :SCHEMA.heartbeats (
	name text PRIMARY KEY,
	period_seconds integer CHECK (period_seconds > 0),
	cron text,
	grace_seconds integer NOT NULL DEFAULT 0 CHECK (grace_seconds >= 0),
	last_beat_at timestamptz NOT NULL DEFAULT now(),
	beats bigint NOT NULL DEFAULT 1,
	reported_state text NOT NULL DEFAULT 'up' CHECK (reported_state IN ('up', 'late', 'down')),
	reported_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	CHECK (period_seconds IS NOT NULL OR cron IS NOT NULL)
);
