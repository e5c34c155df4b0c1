"""What the model is told: the level-of-detail injection and the restore block, under a hard budget.

``lod`` renders the graph by level of detail (focus in full, neighbours summarised, the rest
named, then counted); ``inject`` decides what a prompt or a tool result is told, from the
hook index and the ledger; ``restore`` is SessionStart's block after a compaction, on resume
and at startup, built from ``sections``, ``names`` and ``layout`` over ``view`` (what is in
force) and ``rank`` (which names a coding session needs back).
"""
