-- Co-access (issue 35): files touched together in a session, weighted across sessions.
-- co_access_sessions keeps what each session (or, for a cold start, each git commit) touched,
-- in first-touch order, as paths relative to the worktree (the file nodes' paths);
-- co_access is derived from it at every reconcile (rolling_graph.core.coaccess): weight =
-- sessions touching both / sessions touching either, each counted with the recency decay of
-- the warm graph's other edges; a_first = the share of those sessions in which a came first.
CREATE TABLE IF NOT EXISTS co_access_sessions (
    project_id  bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id  text NOT NULL,                 -- a session id, or 'git:<commit>' when seeded from git
    source      text NOT NULL CHECK (source IN ('session', 'git')),
    files       text[] NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (project_id, session_id)
);
CREATE INDEX IF NOT EXISTS co_access_sessions_by_time ON co_access_sessions (project_id, at DESC);

CREATE TABLE IF NOT EXISTS co_access (
    project_id  bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    a           text NOT NULL,
    b           text NOT NULL,
    weight      real NOT NULL CHECK (weight >= 0 AND weight <= 1),
    a_first     real NOT NULL CHECK (a_first >= 0 AND a_first <= 1),
    sessions    integer NOT NULL CHECK (sessions >= 1),   -- sessions (or commits) touching both
    either      integer NOT NULL CHECK (either >= sessions),
    last_seen   timestamptz NOT NULL,                     -- the latest of them
    PRIMARY KEY (project_id, a, b),
    CHECK (a <> b)
);
CREATE INDEX IF NOT EXISTS co_access_by_b ON co_access (project_id, b);
