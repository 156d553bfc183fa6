-- Alerts grouped by cause. Items that park for the same cause (integration, workflow, step, error
-- class, message with its per-item parts taken out) belong to one open issue: its first item
-- triggers an alert, later ones update the issue's count (at most once per interval), and when
-- its last open item is replayed, resolved or abandoned the issue resolves, once. A cause that
-- parks again afterwards opens a new issue, which triggers again.
CREATE TABLE :SCHEMA.alert_issues (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	cause text NOT NULL,
	status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
	-- Where its alerts go, decided when it opened: page, channel or digest.
	route text NOT NULL CHECK (route IN ('page', 'channel', 'digest')),
	impact text NOT NULL,
	owner text NOT NULL,
	workflow_id text,
	workflow_name text,
	step text,
	integration text,
	error_class text,
	-- The normalized message (masked): what its items have in common.
	message text NOT NULL,
	-- What the issue is about, as its alerts' first line says it: "<workflow>: <business impact>".
	headline text NOT NULL,
	-- The alert text of the item that opened it (masked), for the digest.
	first_text text NOT NULL,
	first_item text,
	last_item text,
	items integer NOT NULL DEFAULT 0,
	open_items integer NOT NULL DEFAULT 0,
	opened_at timestamptz NOT NULL DEFAULT now(),
	last_parked_at timestamptz NOT NULL DEFAULT now(),
	-- As Notify was set when the issue opened, so that the Sweep (which runs elsewhere, with no
	-- settings of its own) paces and caps its updates the same way: at most one update per
	-- interval, at most `ceiling` alerts to the owner per hour; and the console's list of its items.
	update_interval_seconds integer NOT NULL,
	ceiling integer NOT NULL,
	link_base text,
	-- What the last trigger or update said, and when.
	notified_items integer NOT NULL DEFAULT 0,
	notified_at timestamptz,
	resolved_at timestamptz
);
CREATE UNIQUE INDEX alert_issues_open_cause ON :SCHEMA.alert_issues (cause) WHERE status = 'open';
CREATE INDEX alert_issues_resolved_at ON :SCHEMA.alert_issues (resolved_at) WHERE status = 'resolved';

-- The issue a dead letter's latest failure belongs to.
ALTER TABLE :SCHEMA.dead_letters ADD COLUMN issue_id bigint;
CREATE INDEX dead_letters_by_issue ON :SCHEMA.dead_letters (issue_id) WHERE issue_id IS NOT NULL;

-- Every alert sent, and every one held back by an owner's hourly ceiling (`held`), for flood
-- control and its summary: past the ceiling nothing more is sent to the owner that hour, and one
-- summary says how many were held back and where to see them.
CREATE TABLE :SCHEMA.alert_log (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	owner text NOT NULL,
	issue_id bigint,
	action text NOT NULL CHECK (action IN ('trigger', 'update', 'resolve', 'summary', 'held')),
	route text NOT NULL,
	summarized boolean NOT NULL DEFAULT false,
	at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_log_owner_at ON :SCHEMA.alert_log (owner, at);
CREATE INDEX alert_log_held ON :SCHEMA.alert_log (owner) WHERE action = 'held' AND NOT summarized;
