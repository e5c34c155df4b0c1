"""The warm graph: one project's memory across sessions, in PostgreSQL with pgvector.

``server`` and ``server_watch`` run the embedded server (``pgserver``), ``db`` and ``migrate``
connect and keep the schema (``migrations/``); ``reconcile`` folds a session's hot graph into
the warm graph in one transaction (``merge``, ``upsert``, ``keys``, ``warm_facts``,
``embeddings``, ``embed_alongside``); ``resume``, ``startup`` and ``rank`` write the project's
resume snapshot file, which the hook reads without the database (``snapshot``,
``hook_side``); ``pull`` ranks the warm graph against a first prompt; ``read`` and ``forget``
serve the CLI. Only ``hook_side`` and ``snapshot`` are on the hook's path, and they import no
database driver.
"""
