-- The warm graph: per-project nodes and edges merged from every session's hot graph.
-- A warm node's weight is a pure function of its per-session contributions
-- (node_sessions) plus an optional seed weight (anchors from flat memory), so
-- re-reconciling a session replaces its contribution instead of double-counting.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS projects (
    id          bigserial PRIMARY KEY,
    root        text NOT NULL UNIQUE,          -- rolling_graph.store.project.project_root(cwd)
    key         text NOT NULL UNIQUE,          -- rolling_graph.store.project.project_key(root)
    last_focus  text[] NOT NULL DEFAULT '{}',  -- focus of the most recent reconciled session
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS nodes (
    project_id      bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    id              text NOT NULL,                               -- slug, as in the hot graph
    label           text NOT NULL,
    domain          text NOT NULL CHECK (domain IN ('relationship', 'project', 'technical', 'personal')),
    kind            text NOT NULL DEFAULT 'concept',
    summary         text,
    confidence      text NOT NULL DEFAULT 'inferred',
    weight          real NOT NULL CHECK (weight >= 0 AND weight <= 1),
    seed_weight     real CHECK (seed_weight >= 0 AND seed_weight <= 1),  -- set by seeding (flat memory)
    anchor          boolean NOT NULL DEFAULT false,
    floor           real NOT NULL DEFAULT 0 CHECK (floor >= 0 AND floor <= 1),
    first_seen      timestamptz NOT NULL,
    last_activated  timestamptz NOT NULL,
    activations     integer NOT NULL DEFAULT 0,
    session_count   integer NOT NULL DEFAULT 0,                 -- cross-session frequency
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, id)
);
CREATE INDEX IF NOT EXISTS nodes_by_weight ON nodes (project_id, weight DESC);
CREATE INDEX IF NOT EXISTS nodes_by_recency ON nodes (project_id, last_activated DESC);
CREATE INDEX IF NOT EXISTS nodes_by_frequency ON nodes (project_id, session_count DESC);

-- One row per (node, session): the session's latest view of the node.
CREATE TABLE IF NOT EXISTS node_sessions (
    project_id      bigint NOT NULL,
    node_id         text NOT NULL,
    session_id      text NOT NULL,
    weight          real NOT NULL CHECK (weight >= 0 AND weight <= 1),
    activations     integer NOT NULL DEFAULT 1,
    first_seen      timestamptz NOT NULL,
    last_activated  timestamptz NOT NULL,
    sources         text[] NOT NULL DEFAULT '{}',               -- event ids (provenance for graduation)
    journal_seq     bigint NOT NULL,
    PRIMARY KEY (project_id, node_id, session_id),
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS node_sessions_by_session ON node_sessions (project_id, session_id);

CREATE TABLE IF NOT EXISTS edges (
    project_id      bigint NOT NULL,
    source          text NOT NULL,
    relationship    text NOT NULL,
    target          text NOT NULL,
    strength        real NOT NULL CHECK (strength >= 0 AND strength <= 1),
    first_seen      timestamptz NOT NULL,
    last_activated  timestamptz NOT NULL,
    session_count   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, source, relationship, target),
    FOREIGN KEY (project_id, source) REFERENCES nodes(project_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, target) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (project_id, target);

CREATE TABLE IF NOT EXISTS edge_sessions (
    project_id      bigint NOT NULL,
    source          text NOT NULL,
    relationship    text NOT NULL,
    target          text NOT NULL,
    session_id      text NOT NULL,
    strength        real NOT NULL CHECK (strength >= 0 AND strength <= 1),
    last_activated  timestamptz NOT NULL,
    journal_seq     bigint NOT NULL,
    PRIMARY KEY (project_id, source, relationship, target, session_id),
    FOREIGN KEY (project_id, source, relationship, target)
        REFERENCES edges(project_id, source, relationship, target) ON DELETE CASCADE
);

-- Per-session reconciliation state: the journal position last merged.
CREATE TABLE IF NOT EXISTS sessions (
    project_id          bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id          text NOT NULL,
    journal_seq         bigint NOT NULL,
    first_reconciled_at timestamptz NOT NULL DEFAULT now(),
    last_reconciled_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, session_id)
);
CREATE INDEX IF NOT EXISTS sessions_by_id ON sessions (session_id);

-- Audit: one row per reconciliation that changed something.
CREATE TABLE IF NOT EXISTS reconciliations (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id      text NOT NULL,
    trigger         text NOT NULL,   -- pre-compact | session-end | manual | recover
    journal_seq     bigint NOT NULL,
    at              timestamptz NOT NULL DEFAULT now(),
    nodes_in        integer NOT NULL,
    nodes_new       integer NOT NULL,
    edges_in        integer NOT NULL,
    edges_new       integer NOT NULL,
    duration_ms     integer NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS reconciliations_by_session ON reconciliations (session_id, at DESC);
