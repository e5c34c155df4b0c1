"""What happened: a hook payload made a bounded, redacted pending event, and the gate that weighs it.

``events`` turns UserPromptSubmit and PostToolUse payloads into pending events (the probe's
batch), with ``tool_data`` for the structured part of a tool call; ``gate`` decides, cheaply
on every event, whether something worth remembering happened; ``entities`` is the text
analysis both share (names, decisions, corrections, domains); ``compact_summary`` reads
Claude's own compaction summary from the transcript.
"""
