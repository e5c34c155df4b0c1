-- Where each node came in its session's own discovery order: 1 for the names the session
-- touched first, NULL for a node pulled from the warm graph (its first touch in the session
-- is not known) and for rows written before this column. The startup ranking's "opening"
-- leg reads the smallest over sessions: the names sessions of this project open with.
ALTER TABLE node_sessions ADD COLUMN IF NOT EXISTS opening integer;
CREATE INDEX IF NOT EXISTS node_sessions_opening ON node_sessions (project_id, opening) WHERE opening IS NOT NULL;
