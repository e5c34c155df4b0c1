-- Stable keys and durable facts (issue 13).
--
-- 1. Nodes carry their durable facts (``facts``: a file's edit counts and what was edited,
--    a command's last outcome, an error's state, a task's status, who brought it in),
--    folded across sessions by rolling_graph/warm/warm_facts.py; bounded.
-- 2. ``sessions.last_active``: when the session was last active (its latest node), so the
--    resume snapshot can tell which session came last.
-- 3. File nodes are keyed by their path relative to their worktree's top level
--    (rolling_graph.core.filepaths.file_id). Warm data written before stored a file under its
--    absolute path (id = slug of the path, label = the path). Where the project's root is
--    a prefix of the label (the project row's root was the worktree the session ran in),
--    the node is re-keyed to the relative form (so is a relative label whose id was the
--    slug cut at 64 characters, where file_id now ends in a checksum), and merged into
--    the node of that id when one exists already: contributions, edges and vectors move with it (weights and
--    strengths take the larger, activations add up, first/last seen widen; the exact
--    weight is recomputed from the contributions by the next reconcile that touches it).
--
-- What cannot be migrated, and why:
--  * a label stored cut to its tail ("…/x.py", paths over 100 characters): the full path,
--    and so its relative form, is lost;
--  * an absolute path outside the project row's root (another worktree's, another clone's,
--    a file outside the repository): which worktree it lies in is not recorded;
--  * a label with whitespace (no path; a model named the file in words): left as it is;
--  * a merged node's weight is the larger of the two until the next reconcile that touches
--    it recomputes the exact fold (SQL cannot run rolling_graph.warm.merge);
--  * project rows keyed by a linked worktree's own top level (the project identity before
--    issue 13): which repository the worktree belongs to is on the filesystem (its .git
--    file), which SQL cannot read; such rows stay separate projects; their file nodes are
--    re-keyed all the same.

-- 1, 2: the new columns ------------------------------------------------------------------------
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS facts jsonb;
ALTER TABLE nodes DROP CONSTRAINT IF EXISTS nodes_facts_bounded;
ALTER TABLE nodes ADD CONSTRAINT nodes_facts_bounded
    CHECK (facts IS NULL OR (jsonb_typeof(facts) = 'object' AND octet_length(facts::text) <= 2048));
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS last_active timestamptz;
CREATE INDEX IF NOT EXISTS nodes_by_uses ON nodes (project_id, activations DESC);
CREATE INDEX IF NOT EXISTS nodes_by_kind ON nodes (project_id, kind, weight DESC);

-- 3: file ids as rolling_graph.core.filepaths.file_id computes them ------------------------------------
-- slugify: lowercase, every run of characters outside [a-z0-9] one "-", none at the ends
-- (the class is spelled out: a range like a-z may follow the collation).
CREATE OR REPLACE FUNCTION rg_slug(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT trim(BOTH '-' FROM regexp_replace(lower(t), '[^abcdefghijklmnopqrstuvwxyz0123456789]+', '-', 'g'))
$$;

-- zlib's CRC-32 of the text's UTF-8 bytes (reflected, polynomial 0xEDB88320).
CREATE OR REPLACE FUNCTION rg_crc32(t text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    b bytea := convert_to(t, 'UTF8');
    crc bigint := 4294967295;
    i integer;
    j integer;
BEGIN
    FOR i IN 0 .. length(b) - 1 LOOP
        crc := crc # get_byte(b, i);
        FOR j IN 1 .. 8 LOOP
            crc := (crc >> 1) # (3988292384 * (crc & 1));
        END LOOP;
    END LOOP;
    RETURN crc # 4294967295;
END $$;

-- file_id: the slug when it fits 64 characters, else its first 55 and the path's checksum.
CREATE OR REPLACE FUNCTION rg_file_id(path text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE
        WHEN length(rg_slug(path)) = 0 THEN 'node'
        WHEN length(rg_slug(path)) <= 64 THEN rg_slug(path)
        ELSE rtrim(left(rg_slug(path), 55), '-') || '-' || lpad(to_hex(rg_crc32(path)), 8, '0')
    END
$$;

-- The re-keying: one row per file node whose id is not its relative path's.
CREATE TEMP TABLE rg_rekey ON COMMIT DROP AS
SELECT n.project_id, n.id AS old_id, rg_file_id(x.rel) AS new_id, x.rel,
       CASE WHEN length(x.rel) <= 120 THEN x.rel ELSE '…/' || right(x.rel, 118) END AS new_label
FROM nodes n
JOIN projects p ON p.id = n.project_id
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN left(n.label, length(p.root) + 1) = p.root || '/' THEN substr(n.label, length(p.root) + 2)
        WHEN left(n.label, 1) NOT IN ('/', '~', '…') AND n.label NOT LIKE '%…%' AND n.label !~ '\s' THEN n.label
    END AS rel
) x
WHERE n.kind = 'file' AND x.rel IS NOT NULL AND x.rel <> '' AND rg_file_id(x.rel) <> n.id;

-- A new id that is itself an old id being moved would chain: leave those as they are.
DELETE FROM rg_rekey r WHERE EXISTS (SELECT 1 FROM rg_rekey o WHERE o.project_id = r.project_id AND o.old_id = r.new_id);

-- The nodes under their new ids (merged into an existing node of that id).
INSERT INTO nodes AS w (project_id, id, label, domain, kind, summary, confidence, weight, seed_weight, anchor, floor,
                        first_seen, last_activated, activations, session_count, facts, updated_at)
SELECT r.project_id, r.new_id,
       (array_agg(r.new_label ORDER BY n.last_activated DESC))[1],
       (array_agg(n.domain ORDER BY n.last_activated DESC))[1],
       'file',
       (array_agg(n.summary ORDER BY n.last_activated DESC))[1],
       coalesce((ARRAY['asserted', 'inferred', 'observed', 'correction'])[max(array_position(ARRAY['asserted', 'inferred', 'observed', 'correction'], n.confidence))], 'inferred'),
       max(n.weight), max(n.seed_weight), bool_or(n.anchor), max(n.floor),
       min(n.first_seen), max(n.last_activated), sum(n.activations)::integer, max(n.session_count),
       jsonb_build_object('path', left((array_agg(r.rel ORDER BY n.last_activated DESC))[1], 300)), now()
FROM rg_rekey r JOIN nodes n ON n.project_id = r.project_id AND n.id = r.old_id
GROUP BY r.project_id, r.new_id
ON CONFLICT (project_id, id) DO UPDATE SET
    label = CASE WHEN EXCLUDED.last_activated > w.last_activated THEN EXCLUDED.label ELSE w.label END,
    summary = coalesce(w.summary, EXCLUDED.summary),
    confidence = CASE WHEN array_position(ARRAY['asserted', 'inferred', 'observed', 'correction'], EXCLUDED.confidence)
                         > coalesce(array_position(ARRAY['asserted', 'inferred', 'observed', 'correction'], w.confidence), 0)
                      THEN EXCLUDED.confidence ELSE w.confidence END,
    weight = greatest(w.weight, EXCLUDED.weight),
    seed_weight = CASE WHEN w.seed_weight IS NULL THEN EXCLUDED.seed_weight
                       ELSE greatest(w.seed_weight, coalesce(EXCLUDED.seed_weight, 0)) END,
    anchor = w.anchor OR EXCLUDED.anchor,
    floor = greatest(w.floor, EXCLUDED.floor),
    first_seen = least(w.first_seen, EXCLUDED.first_seen),
    last_activated = greatest(w.last_activated, EXCLUDED.last_activated),
    activations = w.activations + EXCLUDED.activations,
    facts = EXCLUDED.facts || coalesce(w.facts, '{}'::jsonb),
    updated_at = now();

-- Each session's contribution, under the new id.
INSERT INTO node_sessions AS x (project_id, node_id, session_id, weight, activations, first_seen, last_activated, sources, journal_seq)
SELECT r.project_id, r.new_id, s.session_id, max(s.weight), sum(s.activations)::integer, min(s.first_seen), max(s.last_activated),
       coalesce(string_to_array(nullif((array_agg(array_to_string(s.sources, chr(31)) ORDER BY s.last_activated DESC))[1], ''), chr(31)), '{}'),
       max(s.journal_seq)
FROM rg_rekey r JOIN node_sessions s ON s.project_id = r.project_id AND s.node_id = r.old_id
GROUP BY r.project_id, r.new_id, s.session_id
ON CONFLICT (project_id, node_id, session_id) DO UPDATE SET
    weight = greatest(x.weight, EXCLUDED.weight),
    activations = x.activations + EXCLUDED.activations,
    first_seen = least(x.first_seen, EXCLUDED.first_seen),
    last_activated = greatest(x.last_activated, EXCLUDED.last_activated),
    sources = CASE WHEN cardinality(x.sources) > 0 THEN x.sources ELSE EXCLUDED.sources END,
    journal_seq = greatest(x.journal_seq, EXCLUDED.journal_seq);

-- Edges touching a moved node, re-pointed (an edge that would join a node to itself goes).
CREATE TEMP TABLE rg_edge_moves ON COMMIT DROP AS
SELECT e.project_id, e.source AS old_source, e.relationship, e.target AS old_target,
       coalesce(rs.new_id, e.source) AS source, coalesce(rt.new_id, e.target) AS target
FROM edges e
LEFT JOIN rg_rekey rs ON rs.project_id = e.project_id AND rs.old_id = e.source
LEFT JOIN rg_rekey rt ON rt.project_id = e.project_id AND rt.old_id = e.target
WHERE rs.old_id IS NOT NULL OR rt.old_id IS NOT NULL;

INSERT INTO edges AS w (project_id, source, relationship, target, strength, first_seen, last_activated, session_count)
SELECT m.project_id, m.source, m.relationship, m.target, max(e.strength), min(e.first_seen), max(e.last_activated), max(e.session_count)
FROM rg_edge_moves m
JOIN edges e ON e.project_id = m.project_id AND e.source = m.old_source AND e.relationship = m.relationship AND e.target = m.old_target
WHERE m.source <> m.target
GROUP BY m.project_id, m.source, m.relationship, m.target
ON CONFLICT (project_id, source, relationship, target) DO UPDATE SET
    strength = greatest(w.strength, EXCLUDED.strength),
    first_seen = least(w.first_seen, EXCLUDED.first_seen),
    last_activated = greatest(w.last_activated, EXCLUDED.last_activated),
    session_count = greatest(w.session_count, EXCLUDED.session_count);

INSERT INTO edge_sessions AS x (project_id, source, relationship, target, session_id, strength, last_activated, journal_seq)
SELECT m.project_id, m.source, m.relationship, m.target, s.session_id, max(s.strength), max(s.last_activated), max(s.journal_seq)
FROM rg_edge_moves m
JOIN edge_sessions s ON s.project_id = m.project_id AND s.source = m.old_source AND s.relationship = m.relationship
                    AND s.target = m.old_target
WHERE m.source <> m.target
GROUP BY m.project_id, m.source, m.relationship, m.target, s.session_id
ON CONFLICT (project_id, source, relationship, target, session_id) DO UPDATE SET
    strength = greatest(x.strength, EXCLUDED.strength),
    last_activated = greatest(x.last_activated, EXCLUDED.last_activated),
    journal_seq = greatest(x.journal_seq, EXCLUDED.journal_seq);

-- A vector moves where the new id has none (its text hash no longer matches, so the next
-- reconcile that touches the node embeds it again).
INSERT INTO node_embeddings (project_id, node_id, model, dim, content_hash, embedding, created_at)
SELECT DISTINCT ON (r.project_id, r.new_id, v.model) r.project_id, r.new_id, v.model, v.dim, v.content_hash, v.embedding, v.created_at
FROM rg_rekey r JOIN node_embeddings v ON v.project_id = r.project_id AND v.node_id = r.old_id
ORDER BY r.project_id, r.new_id, v.model, v.created_at DESC
ON CONFLICT (project_id, node_id, model) DO NOTHING;

-- Graduation and seeding rows that name a moved node follow it where that makes no duplicate
-- (their tables come with migration 010, which a new database has not run yet).
DO $$
BEGIN
IF to_regclass('graduation_drafts') IS NOT NULL THEN
    UPDATE graduation_drafts d SET node_id = r.new_id FROM rg_rekey r
    WHERE d.project_id = r.project_id AND d.node_id = r.old_id
      AND NOT (d.status = 'pending' AND EXISTS (SELECT 1 FROM graduation_drafts o WHERE o.project_id = d.project_id
                                                AND o.node_id = r.new_id AND o.status = 'pending'));
    UPDATE graduation_rejections g SET node_id = r.new_id FROM rg_rekey r
    WHERE g.project_id = r.project_id AND g.node_id = r.old_id
      AND NOT EXISTS (SELECT 1 FROM graduation_rejections o WHERE o.project_id = g.project_id AND o.node_id = r.new_id
                      AND o.node_hash = g.node_hash);
    UPDATE archive_reviews a SET node_id = r.new_id FROM rg_rekey r
    WHERE a.project_id = r.project_id AND a.node_id = r.old_id
      AND NOT (a.status = 'pending' AND EXISTS (SELECT 1 FROM archive_reviews o WHERE o.project_id = a.project_id
                                                AND o.node_id = r.new_id AND o.status = 'pending'));
    UPDATE seeded_anchors a SET node_id = r.new_id FROM rg_rekey r
    WHERE a.project_id = r.project_id AND a.node_id = r.old_id
      AND NOT EXISTS (SELECT 1 FROM seeded_anchors o WHERE o.project_id = a.project_id AND o.node_id = r.new_id);
    UPDATE flat_memories f SET node_id = r.new_id FROM rg_rekey r WHERE f.project_id = r.project_id AND f.node_id = r.old_id;
END IF;
END $$;

-- The old nodes go (their contributions, edges and vectors with them: ON DELETE CASCADE).
DELETE FROM nodes n USING rg_rekey r WHERE n.project_id = r.project_id AND n.id = r.old_id;

-- Session counts and activations of the merged nodes and edges, from their contributions.
UPDATE nodes n SET session_count = c.sessions, activations = c.acts
FROM (SELECT s.project_id, s.node_id, count(*)::integer AS sessions, sum(s.activations)::integer AS acts
      FROM node_sessions s JOIN (SELECT DISTINCT project_id, new_id FROM rg_rekey) r
        ON r.project_id = s.project_id AND r.new_id = s.node_id
      GROUP BY s.project_id, s.node_id) c
WHERE n.project_id = c.project_id AND n.id = c.node_id;

UPDATE edges e SET session_count = c.sessions
FROM (SELECT s.project_id, s.source, s.relationship, s.target, count(*)::integer AS sessions
      FROM edge_sessions s JOIN (SELECT DISTINCT project_id, source, relationship, target FROM rg_edge_moves) m
        ON m.project_id = s.project_id AND m.source = s.source AND m.relationship = s.relationship AND m.target = s.target
      GROUP BY s.project_id, s.source, s.relationship, s.target) c
WHERE e.project_id = c.project_id AND e.source = c.source AND e.relationship = c.relationship AND e.target = c.target;
