-- What Reliability Control's Setup last wrote into an n8n instance for each bundled workflow: the
-- workflow it became there, a fingerprint of the parameters it wrote per node and of the
-- connections, and whether it published it. A later Setup (an upgrade of the package) compares
-- the workflow in n8n with this: a node nobody changed takes the package's new version, a node a
-- person changed keeps their parameters, and a workflow someone unpublished stays unpublished.
CREATE TABLE :SCHEMA.setup_workflows (
	-- The n8n instance, as the n8n API credential addresses it (its base URL).
	instance text NOT NULL,
	bundled_id text NOT NULL,
	workflow_id text NOT NULL,
	-- Node (type and name) -> sha256 of the canonical JSON of the parameters Setup wrote.
	nodes jsonb NOT NULL,
	connections text NOT NULL,
	published boolean NOT NULL,
	written_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (instance, bundled_id)
);
