"""Recorded transcripts through the real hook code, honestly: what replays, demos, tests and recovery share.

``transcript`` turns a Claude Code transcript into the hook events Claude Code would have
sent; ``mirror`` gives each hook a transcript that holds only what was written before it;
``run`` replays them in-process or through real ``rgraph-hook`` processes; ``recover``
rebuilds the sessions a crash left without a sidecar and reconciles what was never
reconciled.
"""
