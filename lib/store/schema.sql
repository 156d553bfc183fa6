-- The store's schema as migrations 1 to 27 leave it, each table whole.
-- Written by `npm run schema:dump`; do not edit: a test migrates a fresh schema and expects
-- this text. :SCHEMA stands for the schema name. On a server without pg_trgm, Trace gets
-- prefix indexes (text_pattern_ops) in place of the trigram ones below.

CREATE OR REPLACE FUNCTION :SCHEMA.dead_letter_daily_apply()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO :SCHEMA.dead_letter_daily AS d (day, workflow_id, step, owner, reason, parked, closed, closed_seconds)
		SELECT (parked_at AT TIME ZONE 'UTC')::date, workflow_id, step, coalesce(owner, ''), left(coalesce(error_message, error_class), 200),
		       count(*), count(closed_at), coalesce(sum(extract(epoch FROM closed_at - parked_at)), 0)
		FROM new_rows GROUP BY 1, 2, 3, 4, 5
		ON CONFLICT (day, workflow_id, step, owner, reason) DO UPDATE SET
			parked = d.parked + EXCLUDED.parked, closed = d.closed + EXCLUDED.closed, closed_seconds = d.closed_seconds + EXCLUDED.closed_seconds;
	ELSE
		INSERT INTO :SCHEMA.dead_letter_daily AS d (day, workflow_id, step, owner, reason, parked, closed, closed_seconds)
		SELECT day, workflow_id, step, owner, reason, sum(parked), sum(closed), sum(closed_seconds)
		FROM (
			SELECT (parked_at AT TIME ZONE 'UTC')::date AS day, workflow_id, step, coalesce(owner, '') AS owner, left(coalesce(error_message, error_class), 200) AS reason,
			       1 AS parked, (closed_at IS NOT NULL)::int AS closed, coalesce(extract(epoch FROM closed_at - parked_at), 0) AS closed_seconds
			FROM new_rows
			UNION ALL
			SELECT (parked_at AT TIME ZONE 'UTC')::date, workflow_id, step, coalesce(owner, ''), left(coalesce(error_message, error_class), 200),
			       -1, -(closed_at IS NOT NULL)::int, -coalesce(extract(epoch FROM closed_at - parked_at), 0)
			FROM old_rows
		) change
		GROUP BY 1, 2, 3, 4, 5
		HAVING sum(parked) <> 0 OR sum(closed) <> 0 OR sum(closed_seconds) <> 0
		ON CONFLICT (day, workflow_id, step, owner, reason) DO UPDATE SET
			parked = d.parked + EXCLUDED.parked, closed = d.closed + EXCLUDED.closed, closed_seconds = d.closed_seconds + EXCLUDED.closed_seconds;
	END IF;
	RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION :SCHEMA.dead_letter_events_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	RAISE EXCEPTION 'the dead-letter audit trail is append-only' USING ERRCODE = 'insufficient_privilege';
END $function$;

CREATE OR REPLACE FUNCTION :SCHEMA.dead_letter_events_keep()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	IF EXISTS (SELECT 1 FROM :SCHEMA.dead_letters WHERE id = OLD.dead_letter_id) THEN
		RAISE EXCEPTION 'the dead-letter audit trail is append-only' USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN OLD;
END $function$;

CREATE TABLE :SCHEMA.alert_issues (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	cause text NOT NULL,
	status text NOT NULL DEFAULT 'open'::text,
	route text NOT NULL,
	impact text NOT NULL,
	owner text NOT NULL,
	workflow_id text,
	workflow_name text,
	step text,
	integration text,
	error_class text,
	message text NOT NULL,
	headline text NOT NULL,
	first_text text NOT NULL,
	first_item text,
	last_item text,
	items integer NOT NULL DEFAULT 0,
	open_items integer NOT NULL DEFAULT 0,
	opened_at timestamp with time zone NOT NULL DEFAULT now(),
	last_parked_at timestamp with time zone NOT NULL DEFAULT now(),
	update_interval_seconds integer NOT NULL,
	ceiling integer NOT NULL,
	link_base text,
	notified_items integer NOT NULL DEFAULT 0,
	notified_at timestamp with time zone,
	resolved_at timestamp with time zone,
	CONSTRAINT alert_issues_pkey PRIMARY KEY (id),
	CONSTRAINT alert_issues_route_check CHECK ((route = ANY (ARRAY['page'::text, 'channel'::text, 'digest'::text]))),
	CONSTRAINT alert_issues_status_check CHECK ((status = ANY (ARRAY['open'::text, 'resolved'::text])))
);
CREATE UNIQUE INDEX alert_issues_open_cause ON :SCHEMA.alert_issues USING btree (cause) WHERE (status = 'open'::text);
CREATE INDEX alert_issues_resolved_at ON :SCHEMA.alert_issues USING btree (resolved_at) WHERE (status = 'resolved'::text);

CREATE TABLE :SCHEMA.alert_log (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	owner text NOT NULL,
	issue_id bigint,
	action text NOT NULL,
	route text NOT NULL,
	summarized boolean NOT NULL DEFAULT false,
	at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT alert_log_pkey PRIMARY KEY (id),
	CONSTRAINT alert_log_action_check CHECK ((action = ANY (ARRAY['trigger'::text, 'update'::text, 'resolve'::text, 'summary'::text, 'held'::text])))
);
CREATE INDEX alert_log_held ON :SCHEMA.alert_log USING btree (owner) WHERE ((action = 'held'::text) AND (NOT summarized));
CREATE INDEX alert_log_owner_at ON :SCHEMA.alert_log USING btree (owner, at);

CREATE TABLE :SCHEMA.breakers (
	integration text NOT NULL,
	consecutive_failures integer NOT NULL DEFAULT 0,
	open_until timestamp with time zone,
	updated_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT breakers_pkey PRIMARY KEY (integration)
);

CREATE TABLE :SCHEMA.console_secret (
	id boolean NOT NULL DEFAULT true,
	secret bytea NOT NULL,
	created_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT console_secret_pkey PRIMARY KEY (id),
	CONSTRAINT console_secret_id_check CHECK (id),
	CONSTRAINT console_secret_secret_check CHECK ((octet_length(secret) >= 32))
);

CREATE TABLE :SCHEMA.dead_letter_daily (
	day date NOT NULL,
	workflow_id text NOT NULL,
	step text NOT NULL,
	owner text NOT NULL,
	reason text NOT NULL,
	parked integer NOT NULL DEFAULT 0,
	closed integer NOT NULL DEFAULT 0,
	closed_seconds numeric NOT NULL DEFAULT 0,
	CONSTRAINT dead_letter_daily_pkey PRIMARY KEY (day, workflow_id, step, owner, reason)
);

CREATE TABLE :SCHEMA.dead_letter_events (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	dead_letter_id bigint NOT NULL,
	at timestamp with time zone NOT NULL DEFAULT now(),
	actor text NOT NULL,
	from_status text,
	to_status text NOT NULL,
	reason text,
	CONSTRAINT dead_letter_events_pkey PRIMARY KEY (id),
	CONSTRAINT dead_letter_events_dead_letter_id_fkey FOREIGN KEY (dead_letter_id) REFERENCES :SCHEMA.dead_letters(id) ON DELETE CASCADE
);
CREATE INDEX dead_letter_events_by_letter ON :SCHEMA.dead_letter_events USING btree (dead_letter_id, id);
CREATE TRIGGER dead_letter_events_no_delete BEFORE DELETE ON :SCHEMA.dead_letter_events FOR EACH ROW EXECUTE FUNCTION :SCHEMA.dead_letter_events_keep();
CREATE TRIGGER dead_letter_events_no_update BEFORE UPDATE ON :SCHEMA.dead_letter_events FOR EACH ROW EXECUTE FUNCTION :SCHEMA.dead_letter_events_append_only();

CREATE TABLE :SCHEMA.dead_letter_parked_carried (
	workflow_id text NOT NULL,
	step text NOT NULL,
	parked bigint NOT NULL,
	CONSTRAINT dead_letter_parked_carried_pkey PRIMARY KEY (workflow_id, step)
);

CREATE TABLE :SCHEMA.dead_letters (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	workflow_id text NOT NULL,
	workflow_name text,
	execution_id text,
	step text NOT NULL,
	item_index integer,
	item_key text NOT NULL,
	idempotency_key text,
	run_link text,
	integration text,
	error_class text NOT NULL,
	error_message text,
	error_status integer,
	attempts integer NOT NULL DEFAULT 1,
	failure_count integer NOT NULL DEFAULT 1,
	already_happened text,
	impact text,
	owner text,
	severity text NOT NULL DEFAULT 'normal'::text,
	status text NOT NULL DEFAULT 'new'::text,
	is_open boolean GENERATED ALWAYS AS ((status = ANY (ARRAY['new'::text, 'being_fixed'::text, 'replay_requested'::text, 'held'::text]))) STORED,
	payload json NOT NULL,
	retry_after timestamp with time zone,
	first_failed_at timestamp with time zone NOT NULL DEFAULT now(),
	last_failed_at timestamp with time zone NOT NULL DEFAULT now(),
	parked_at timestamp with time zone NOT NULL DEFAULT now(),
	closed_at timestamp with time zone,
	updated_at timestamp with time zone NOT NULL DEFAULT now(),
	expires_at timestamp with time zone NOT NULL,
	generation bigint NOT NULL DEFAULT 1,
	taken_by text,
	hold_reason text,
	previous_status text,
	attempt_history jsonb NOT NULL DEFAULT '[]'::jsonb,
	source_version text,
	steps jsonb NOT NULL DEFAULT '[]'::jsonb,
	alert_due timestamp with time zone,
	business_id text,
	issue_id bigint,
	CONSTRAINT dead_letters_pkey PRIMARY KEY (id),
	CONSTRAINT dead_letters_hold_reason_check CHECK ((hold_reason = ANY (ARRAY['pause'::text, 'breaker'::text]))),
	CONSTRAINT dead_letters_status_check CHECK ((status = ANY (ARRAY['new'::text, 'being_fixed'::text, 'replay_requested'::text, 'replayed'::text, 'resolved'::text, 'abandoned'::text, 'held'::text, 'compensated'::text])))
);
CREATE INDEX dead_letters_alert_due ON :SCHEMA.dead_letters USING btree (alert_due) WHERE (alert_due IS NOT NULL);
CREATE INDEX dead_letters_by_business_id ON :SCHEMA.dead_letters USING btree (business_id) WHERE (business_id IS NOT NULL);
CREATE INDEX dead_letters_by_issue ON :SCHEMA.dead_letters USING btree (issue_id) WHERE (issue_id IS NOT NULL);
CREATE INDEX dead_letters_expires_at ON :SCHEMA.dead_letters USING btree (expires_at);
CREATE INDEX dead_letters_held_by_integration ON :SCHEMA.dead_letters USING btree (integration) WHERE (status = 'held'::text);
CREATE INDEX dead_letters_idempotency_key ON :SCHEMA.dead_letters USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);
CREATE INDEX dead_letters_idempotency_key_trgm ON :SCHEMA.dead_letters USING gin (lower(idempotency_key) gin_trgm_ops) WHERE (idempotency_key IS NOT NULL);
CREATE INDEX dead_letters_open_by_execution ON :SCHEMA.dead_letters USING btree (execution_id) WHERE is_open;
CREATE INDEX dead_letters_open_cover ON :SCHEMA.dead_letters USING btree (status, workflow_id, step, owner, parked_at) WHERE is_open;
CREATE UNIQUE INDEX dead_letters_open_identity ON :SCHEMA.dead_letters USING btree (workflow_id, (
CASE
    WHEN (item_key ~~ 'key:event:%'::text) THEN ''::text
    ELSE step
END), item_key) WHERE is_open;
CREATE INDEX dead_letters_parked_at ON :SCHEMA.dead_letters USING btree (parked_at);
CREATE INDEX dead_letters_source_version ON :SCHEMA.dead_letters USING btree (workflow_id, step, last_failed_at DESC) WHERE (source_version IS NOT NULL);
CREATE INDEX dead_letters_status_parked ON :SCHEMA.dead_letters USING btree (status, parked_at);
CREATE TRIGGER dead_letter_daily_on_insert AFTER INSERT ON :SCHEMA.dead_letters REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION :SCHEMA.dead_letter_daily_apply();
CREATE TRIGGER dead_letter_daily_on_update AFTER UPDATE ON :SCHEMA.dead_letters REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION :SCHEMA.dead_letter_daily_apply();

CREATE TABLE :SCHEMA.drill_events (
	id bigint NOT NULL DEFAULT nextval(':SCHEMA.drill_events_id_seq'::regclass),
	integration text NOT NULL,
	action text NOT NULL,
	actor text NOT NULL,
	reason text,
	at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT drill_events_pkey PRIMARY KEY (id)
);
CREATE INDEX drill_events_integration_at ON :SCHEMA.drill_events USING btree (integration, at);

CREATE TABLE :SCHEMA.drills (
	integration text NOT NULL,
	started_by text NOT NULL,
	reason text,
	started_at timestamp with time zone NOT NULL DEFAULT now(),
	expires_at timestamp with time zone NOT NULL,
	timeout_armed boolean NOT NULL DEFAULT false,
	armed_at timestamp with time zone,
	armed_for text,
	armed_until timestamp with time zone,
	fired_at timestamp with time zone,
	fired_scope text,
	fired_key text,
	fired_execution text,
	CONSTRAINT drills_pkey PRIMARY KEY (integration)
);

CREATE TABLE :SCHEMA.entity_versions (
	consumer text NOT NULL,
	entity_key text NOT NULL,
	version numeric NOT NULL,
	previous_version numeric,
	event_id text NOT NULL,
	execution_id text,
	updated_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT entity_versions_pkey PRIMARY KEY (consumer, entity_key)
) WITH (autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=1000, autovacuum_analyze_scale_factor=0.02);

CREATE TABLE :SCHEMA.execution_reports (
	execution_id text NOT NULL,
	ending text NOT NULL,
	reports integer NOT NULL DEFAULT 1,
	first_reported_at timestamp with time zone NOT NULL DEFAULT now(),
	last_reported_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT execution_reports_pkey PRIMARY KEY (execution_id),
	CONSTRAINT execution_reports_ending_check CHECK ((ending = ANY (ARRAY['failed'::text, 'crashed'::text, 'stopped'::text])))
);
CREATE INDEX execution_reports_age ON :SCHEMA.execution_reports USING btree (first_reported_at);

CREATE TABLE :SCHEMA.heartbeats (
	name text NOT NULL,
	period_seconds integer,
	cron text,
	grace_seconds integer NOT NULL DEFAULT 0,
	last_beat_at timestamp with time zone NOT NULL DEFAULT now(),
	beats bigint NOT NULL DEFAULT 1,
	reported_state text NOT NULL DEFAULT 'up'::text,
	reported_at timestamp with time zone,
	created_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT heartbeats_pkey PRIMARY KEY (name),
	CONSTRAINT heartbeats_check CHECK (((period_seconds IS NOT NULL) OR (cron IS NOT NULL))),
	CONSTRAINT heartbeats_grace_seconds_check CHECK ((grace_seconds >= 0)),
	CONSTRAINT heartbeats_period_seconds_check CHECK ((period_seconds > 0)),
	CONSTRAINT heartbeats_reported_state_check CHECK ((reported_state = ANY (ARRAY['up'::text, 'late'::text, 'down'::text])))
);

CREATE TABLE :SCHEMA.idempotency_keys (
	scope text NOT NULL,
	key text NOT NULL,
	fingerprint text NOT NULL,
	status text NOT NULL,
	lease_until timestamp with time zone NOT NULL,
	workflow_id text,
	execution_id text,
	node text,
	attempts integer NOT NULL DEFAULT 0,
	response_status integer,
	response_headers json,
	response_body text,
	response_truncated boolean NOT NULL DEFAULT false,
	last_error text,
	created_at timestamp with time zone NOT NULL DEFAULT now(),
	updated_at timestamp with time zone NOT NULL DEFAULT now(),
	completed_at timestamp with time zone,
	expires_at timestamp with time zone NOT NULL,
	generation bigint NOT NULL DEFAULT 1,
	attempt_started_at timestamp with time zone,
	attempt_timeout_ms integer,
	history jsonb NOT NULL DEFAULT '[]'::jsonb,
	item_ref text,
	compensation jsonb,
	compensated_at timestamp with time zone,
	compensated_by text,
	compensated_for text,
	business_id text,
	CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key),
	CONSTRAINT idempotency_keys_status_check CHECK ((status = ANY (ARRAY['in_progress'::text, 'succeeded'::text, 'failed'::text, 'unknown'::text, 'compensated'::text])))
) WITH (autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=1000, autovacuum_analyze_scale_factor=0.02);
CREATE INDEX idempotency_keys_by_business_id ON :SCHEMA.idempotency_keys USING btree (business_id) WHERE (business_id IS NOT NULL);
CREATE INDEX idempotency_keys_by_item ON :SCHEMA.idempotency_keys USING btree (workflow_id, item_ref) WHERE ((item_ref IS NOT NULL) AND (status = 'succeeded'::text));
CREATE INDEX idempotency_keys_by_key ON :SCHEMA.idempotency_keys USING btree (key);
CREATE INDEX idempotency_keys_expires_at ON :SCHEMA.idempotency_keys USING btree (expires_at);
CREATE INDEX idempotency_keys_key_trgm ON :SCHEMA.idempotency_keys USING gin (lower(key) gin_trgm_ops);
CREATE INDEX idempotency_keys_open_by_execution ON :SCHEMA.idempotency_keys USING btree (execution_id) WHERE (status = 'in_progress'::text);

CREATE TABLE :SCHEMA.migrations (
	id integer NOT NULL,
	name text NOT NULL,
	applied_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT migrations_pkey PRIMARY KEY (id)
);

CREATE TABLE :SCHEMA.outbox_messages (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	destination text NOT NULL,
	method text NOT NULL,
	url text NOT NULL,
	headers json NOT NULL DEFAULT '{}'::json,
	body json,
	idempotency_key text NOT NULL,
	fingerprint text NOT NULL,
	ordering_key text,
	status text NOT NULL DEFAULT 'pending'::text,
	generation integer NOT NULL DEFAULT 0,
	attempts integer NOT NULL DEFAULT 0,
	available_at timestamp with time zone NOT NULL DEFAULT now(),
	lease_until timestamp with time zone,
	taken_by text,
	taken_at timestamp with time zone,
	last_error_class text,
	last_error text,
	last_error_status integer,
	dead_letter_id text,
	superseded_count integer NOT NULL DEFAULT 0,
	last_superseded_at timestamp with time zone,
	workflow_id text,
	execution_id text,
	node text,
	created_at timestamp with time zone NOT NULL DEFAULT now(),
	updated_at timestamp with time zone NOT NULL DEFAULT now(),
	completed_at timestamp with time zone,
	CONSTRAINT outbox_messages_pkey PRIMARY KEY (id),
	CONSTRAINT outbox_messages_destination_idempotency_key_key UNIQUE (destination, idempotency_key),
	CONSTRAINT outbox_messages_method_check CHECK ((method = ANY (ARRAY['POST'::text, 'PUT'::text, 'PATCH'::text, 'DELETE'::text]))),
	CONSTRAINT outbox_messages_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'in_flight'::text, 'done'::text, 'dead'::text])))
) WITH (autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=1000, autovacuum_analyze_scale_factor=0.02);
CREATE INDEX outbox_messages_completed_at ON :SCHEMA.outbox_messages USING btree (completed_at) WHERE (status = ANY (ARRAY['done'::text, 'dead'::text]));
CREATE INDEX outbox_messages_open ON :SCHEMA.outbox_messages USING btree (available_at, id) WHERE (status = ANY (ARRAY['pending'::text, 'in_flight'::text]));
CREATE INDEX outbox_messages_open_ordering ON :SCHEMA.outbox_messages USING btree (destination, ordering_key, id) WHERE ((status = ANY (ARRAY['pending'::text, 'in_flight'::text])) AND (ordering_key IS NOT NULL));

CREATE TABLE :SCHEMA.pause_events (
	id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	scope text NOT NULL,
	name text NOT NULL,
	paused boolean NOT NULL,
	actor text NOT NULL,
	reason text,
	at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT pause_events_pkey PRIMARY KEY (id)
);

CREATE TABLE :SCHEMA.pauses (
	scope text NOT NULL,
	name text NOT NULL,
	paused boolean NOT NULL,
	changed_by text NOT NULL,
	reason text,
	changed_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT pauses_pkey PRIMARY KEY (scope, name),
	CONSTRAINT pauses_scope_check CHECK ((scope = ANY (ARRAY['integration'::text, 'workflow'::text])))
);

CREATE TABLE :SCHEMA.processed_events (
	consumer text NOT NULL,
	event_id text NOT NULL,
	status text NOT NULL,
	workflow_id text,
	execution_id text,
	claimed_at timestamp with time zone NOT NULL DEFAULT now(),
	lease_until timestamp with time zone NOT NULL,
	completed_at timestamp with time zone,
	expires_at timestamp with time zone NOT NULL,
	entity_key text,
	version numeric,
	generation bigint NOT NULL DEFAULT 1,
	completed_by text,
	payload json,
	payload_bytes integer,
	recover_attempts integer NOT NULL DEFAULT 0,
	last_error text,
	origin_execution_id text,
	previous_executions text[] NOT NULL DEFAULT '{}'::text[],
	settled_as text,
	failed_step text,
	ancestors text[] NOT NULL DEFAULT '{}'::text[],
	waiting_till timestamp with time zone,
	if_gone text,
	run_limit_seconds integer,
	ask_at timestamp with time zone,
	rerun_at timestamp with time zone,
	rerun_execution text,
	CONSTRAINT processed_events_pkey PRIMARY KEY (consumer, event_id),
	CONSTRAINT processed_events_completed_by_check CHECK ((completed_by = ANY (ARRAY['claim'::text, 'complete'::text, 'ordering'::text]))),
	CONSTRAINT processed_events_if_gone_check CHECK ((if_gone = ANY (ARRAY['done'::text, 'check'::text]))),
	CONSTRAINT processed_events_settled_as_check CHECK ((settled_as = ANY (ARRAY['parked'::text, 'covered'::text, 'dropped'::text]))),
	CONSTRAINT processed_events_status_check CHECK ((status = ANY (ARRAY['in_progress'::text, 'done'::text, 'failed'::text])))
) WITH (autovacuum_vacuum_scale_factor=0.02, autovacuum_vacuum_threshold=1000, autovacuum_analyze_scale_factor=0.02);
CREATE INDEX processed_events_by_event_id ON :SCHEMA.processed_events USING btree (event_id);
CREATE INDEX processed_events_by_execution ON :SCHEMA.processed_events USING btree (execution_id);
CREATE INDEX processed_events_by_rerun ON :SCHEMA.processed_events USING btree (rerun_execution) WHERE (rerun_execution IS NOT NULL);
CREATE INDEX processed_events_event_id_trgm ON :SCHEMA.processed_events USING gin (lower(event_id) gin_trgm_ops);
CREATE INDEX processed_events_expires_at ON :SCHEMA.processed_events USING btree (expires_at);
CREATE INDEX processed_events_inbox_by_origin ON :SCHEMA.processed_events USING btree (origin_execution_id) WHERE ((payload IS NOT NULL) OR (payload_bytes IS NOT NULL));
CREATE INDEX processed_events_inbox_by_previous ON :SCHEMA.processed_events USING gin (previous_executions) WHERE ((payload IS NOT NULL) OR (payload_bytes IS NOT NULL));
CREATE INDEX processed_events_lapsed ON :SCHEMA.processed_events USING btree (lease_until) WHERE (status = 'in_progress'::text);
CREATE INDEX processed_events_unsettled ON :SCHEMA.processed_events USING btree (lease_until) WHERE ((status = 'failed'::text) AND (settled_as IS NULL) AND ((payload IS NOT NULL) OR (payload_bytes IS NOT NULL)));
CREATE INDEX processed_events_waiting ON :SCHEMA.processed_events USING btree (ask_at) WHERE ((status = 'in_progress'::text) AND (waiting_till IS NOT NULL));

CREATE TABLE :SCHEMA.setup_workflows (
	instance text NOT NULL,
	bundled_id text NOT NULL,
	workflow_id text NOT NULL,
	nodes jsonb NOT NULL,
	connections text NOT NULL,
	published boolean NOT NULL,
	written_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT setup_workflows_pkey PRIMARY KEY (instance, bundled_id)
);

CREATE TABLE :SCHEMA.workflow_audits (
	workflow_id text NOT NULL,
	workflow_name text,
	active boolean NOT NULL DEFAULT false,
	score integer NOT NULL,
	checklist jsonb NOT NULL,
	inventory jsonb NOT NULL,
	findings jsonb NOT NULL,
	accepted jsonb NOT NULL,
	audited_at timestamp with time zone NOT NULL DEFAULT now(),
	CONSTRAINT workflow_audits_pkey PRIMARY KEY (workflow_id),
	CONSTRAINT workflow_audits_score_check CHECK (((score >= 0) AND (score <= 100)))
);
