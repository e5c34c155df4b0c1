-- Rebuild each model's HNSW index with m = 8, ef_construction = 32 (was m = 16,
-- ef_construction = 40). Inserting the new nodes of a 2,000-node session into a
-- 100,000-vector index took 1.9-4.0 s with the old parameters and 0.7-1.2 s with these,
-- for a measured recall@10 of 0.98 instead of 0.99 at the ef_search the pull uses
-- (bench/bench_reconcile.py; reconcile.embeddings.HNSW_M). Keep in step with
-- rolling_graph/warm/embeddings.py, which builds new models' indexes with the same parameters.

SET LOCAL maintenance_work_mem = '256MB';

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT index_name FROM embedding_models LOOP
        IF to_regclass(r.index_name) IS NOT NULL THEN
            EXECUTE format('ALTER INDEX %I SET (m = 8, ef_construction = 32)', r.index_name);
            EXECUTE format('REINDEX INDEX %I', r.index_name);
        END IF;
    END LOOP;
END $$;
