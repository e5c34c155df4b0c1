-- What `rgraph forget` removed from the warm graph, as it was, so `--undo` puts it back whole:
-- the node's row, every session's contribution, its edges (with theirs) and its vectors, as
-- JSON rows of their tables. `--purge` keeps neither this nor the label: only the id and time.
ALTER TABLE forgotten_nodes ADD COLUMN IF NOT EXISTS saved jsonb;
ALTER TABLE forgotten_nodes ALTER COLUMN label DROP NOT NULL;
