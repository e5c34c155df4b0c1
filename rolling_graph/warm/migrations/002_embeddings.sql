-- Node embeddings, tagged with model and dimension. pgvector needs a fixed dimension per
-- index, so the column is dimensionless and each model gets a partial HNSW index over a
-- cast to its dimension (see reconcile.embeddings.ensure_index); queries filter on model
-- and cast the same way, so two models' vectors are never compared.

CREATE TABLE IF NOT EXISTS node_embeddings (
    project_id    bigint NOT NULL,
    node_id       text NOT NULL,
    model         text NOT NULL,
    dim           integer NOT NULL CHECK (dim > 0 AND dim <= 2000),
    content_hash  text NOT NULL,        -- of the embedded text; re-embed when it changes
    embedding     vector NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, node_id, model),
    FOREIGN KEY (project_id, node_id) REFERENCES nodes(project_id, id) ON DELETE CASCADE,
    CHECK (vector_dims(embedding) = dim)
);

CREATE TABLE IF NOT EXISTS embedding_models (
    model       text PRIMARY KEY,
    dim         integer NOT NULL,
    index_name  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
