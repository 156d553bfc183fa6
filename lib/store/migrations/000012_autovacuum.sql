-- Autovacuum for the tables that take rows all day and lose as many to Housekeeping every night.
-- Postgres's defaults vacuum a table once a fifth of it is dead: for a store of 10M key records
-- that is 2M dead rows, about a week of purges, and the table and its indexes grow by that much
-- meanwhile. Vacuumed once 2% is dead (and analyzed as often), a day's purge is cleaned up by the
-- next autovacuum round and its space is reused by the next day's rows.
ALTER TABLE :SCHEMA.idempotency_keys SET (
	autovacuum_vacuum_scale_factor = 0.02,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE :SCHEMA.processed_events SET (
	autovacuum_vacuum_scale_factor = 0.02,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE :SCHEMA.entity_versions SET (
	autovacuum_vacuum_scale_factor = 0.02,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE :SCHEMA.outbox_messages SET (
	autovacuum_vacuum_scale_factor = 0.02,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.02
);
