-- The last audit of each workflow (Reliability Control > Audit > Generate): its score, its
-- checklist, its failure inventory and its findings, open and accepted, as the audit output them. One row per
-- workflow, replaced by the next audit of it, so the console and the metrics show the instance
-- as it was last audited; a workflow that is gone is forgotten by the next audit of the whole
-- instance.
CREATE TABLE :SCHEMA.workflow_audits (
	workflow_id text PRIMARY KEY,
	workflow_name text,
	active boolean NOT NULL DEFAULT false,
	score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
	checklist jsonb NOT NULL,
	inventory jsonb NOT NULL,
	findings jsonb NOT NULL,
	accepted jsonb NOT NULL,
	audited_at timestamptz NOT NULL DEFAULT now()
);
