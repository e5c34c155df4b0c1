-- Nodes a user removed from a project's warm graph (`rgraph forget`). A session's
-- contribution does not bring one back unless that session touched it after it was
-- forgotten: an old sidecar reconciled again, or a node pulled and never used, stays gone.
CREATE TABLE IF NOT EXISTS forgotten_nodes (
    project_id    bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    node_id       text NOT NULL,
    label         text NOT NULL,
    forgotten_at  timestamptz NOT NULL,
    PRIMARY KEY (project_id, node_id)
);
