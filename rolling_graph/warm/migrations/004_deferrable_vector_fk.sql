-- A reconcile inserts its nodes' vectors on a second connection while the merge's
-- transaction is still open (rolling_graph/warm/embed_alongside.py); that transaction defers the
-- vectors' foreign key to its commit, which comes after the merge's commit. Every other
-- writer keeps the immediate check (INITIALLY IMMEDIATE).

DO $$
DECLARE
    fk text;
BEGIN
    SELECT conname INTO fk FROM pg_constraint
    WHERE conrelid = 'node_embeddings'::regclass AND confrelid = 'nodes'::regclass AND contype = 'f';
    IF fk IS NOT NULL THEN
        EXECUTE format('ALTER TABLE node_embeddings ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE', fk);
    END IF;
END $$;
