-- Graduation: warm-graph nodes that proved themselves become flat memories after a human
-- approves a drafted text (the one-way door); flat memories seed the warm graph as anchors.
-- Numbered 010 so it never collides with the warm graph's own migrations.

-- When an anchor's weight first sat at its floor (NULL while above it); the nightly job
-- maintains it and queues archive review after six weeks.
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS at_floor_since timestamptz;

-- What makes a node "materially changed": its text, kind, domain and any supersedes edge
-- touching it (a superseded decision must not graduate unchanged). Weight and session
-- counts move every reconcile and are deliberately left out. NULL when the node is gone.
CREATE OR REPLACE FUNCTION rg_node_hash(p_project bigint, p_node text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT md5(concat_ws(chr(31), n.label, coalesce(n.summary, ''), n.kind, n.domain,
        coalesce((SELECT string_agg(e.source || '|' || e.target, chr(30) ORDER BY e.source, e.target)
                  FROM edges e
                  WHERE e.project_id = n.project_id AND e.relationship = 'supersedes'
                    AND (e.source = n.id OR e.target = n.id)), '')))
    FROM nodes n WHERE n.project_id = p_project AND n.id = p_node
$$;

-- Approved memories (and only those): content, embedding tagged with model and dimension,
-- provenance (sessions, journal events "<session>#<seq>"), who approved and when.
CREATE TABLE IF NOT EXISTS flat_memories (
    id                bigserial PRIMARY KEY,
    project_id        bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    node_id           text,
    draft_id          bigint,
    kind              text NOT NULL CHECK (kind IN ('correction', 'decision', 'preference', 'note')),
    content           text NOT NULL,
    embedding         vector,
    model             text,
    dim               integer,
    sessions          text[] NOT NULL DEFAULT '{}',
    events            text[] NOT NULL DEFAULT '{}',
    approved_by       text NOT NULL,
    approved_at       timestamptz NOT NULL,
    edited_in_review  boolean NOT NULL DEFAULT false,
    edited_at         timestamptz,   -- changed by the user after approval (in the exported file)
    deleted_at        timestamptz,   -- removed by the user after approval
    exported_at       timestamptz,   -- last written to the project's memory file
    CHECK (embedding IS NULL OR (model IS NOT NULL AND vector_dims(embedding) = dim))
);
CREATE INDEX IF NOT EXISTS flat_memories_by_project ON flat_memories (project_id, approved_at);

-- Drafts for candidates. At most one pending draft per node (the partial unique index makes
-- a second nightly run, or two at once, unable to propose a node twice).
CREATE TABLE IF NOT EXISTS graduation_drafts (
    id            bigserial PRIMARY KEY,
    project_id    bigint NOT NULL,
    node_id       text NOT NULL,
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'rejected', 'duplicate', 'stale')),
    kind          text NOT NULL CHECK (kind IN ('correction', 'decision', 'preference', 'note')),
    content       text NOT NULL,
    sessions      text[] NOT NULL DEFAULT '{}',
    events        text[] NOT NULL DEFAULT '{}',
    node_hash     text NOT NULL,               -- rg_node_hash() when drafted
    backend       text NOT NULL,
    model         text,
    problems      text[] NOT NULL DEFAULT '{}', -- grounding problems (why a model draft was refused)
    duplicate_of  bigint REFERENCES flat_memories(id) ON DELETE SET NULL,
    similarity    real,
    replaces      bigint REFERENCES graduation_drafts(id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL,
    decided_at    timestamptz,
    decided_by    text,
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS graduation_one_pending ON graduation_drafts (project_id, node_id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS graduation_drafts_by_status ON graduation_drafts (status, project_id);

-- The rejected set: a node rejected in this state is not proposed again until it changes.
CREATE TABLE IF NOT EXISTS graduation_rejections (
    project_id   bigint NOT NULL,
    node_id      text NOT NULL,
    node_hash    text NOT NULL,
    draft_id     bigint REFERENCES graduation_drafts(id) ON DELETE SET NULL,
    rejected_by  text NOT NULL,
    rejected_at  timestamptz NOT NULL,
    reason       text,
    PRIMARY KEY (project_id, node_id, node_hash),
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);

-- What became of each graduated memory (the spec's 30-day quality signal).
CREATE TABLE IF NOT EXISTS graduation_outcomes (
    memory_id  bigint NOT NULL REFERENCES flat_memories(id) ON DELETE CASCADE,
    outcome    text NOT NULL CHECK (outcome IN ('edited', 'deleted', 'kept')),
    at         timestamptz NOT NULL,
    detail     text,
    PRIMARY KEY (memory_id, outcome)
);

-- Anchors that sat at their floor for six weeks or more, for a human to keep or archive.
CREATE TABLE IF NOT EXISTS archive_reviews (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL,
    node_id         text NOT NULL,
    at_floor_since  timestamptz NOT NULL,
    queued_at       timestamptz NOT NULL,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'kept', 'archived')),
    decided_at      timestamptz,
    decided_by      text,
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS archive_one_pending ON archive_reviews (project_id, node_id) WHERE status = 'pending';

-- Anchors seeded from flat memory (approved memories, a user's markdown notes): idempotent
-- by (project, node); ``source`` is the memory id or the file it came from.
CREATE TABLE IF NOT EXISTS seeded_anchors (
    project_id    bigint NOT NULL,
    node_id       text NOT NULL,
    origin        text NOT NULL CHECK (origin IN ('flat_memory', 'markdown')),
    source        text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('correction', 'decision', 'preference', 'note')),
    content_hash  text NOT NULL,
    seeded_at     timestamptz NOT NULL,
    PRIMARY KEY (project_id, node_id),
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE
);
