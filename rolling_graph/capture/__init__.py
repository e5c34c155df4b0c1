"""What happened: a hook payload made a bounded, redacted pending event, and the gate that weighs it.

``payload`` reads a hook payload, once, into a typed event, and ``tools`` a tool call into
its tool's class (its text, paths and structured data); ``text`` is how an untrusted value
reads as bounded text; ``events`` turns a prompt or a tool result into a pending event (the probe's
batch: bounded, redacted text, paths and structured data); ``gate`` decides, cheaply
on every event, whether something worth remembering happened; ``entities`` is the text
analysis both share (names, decisions, corrections, domains); ``compact_summary`` reads
Claude's own compaction summary from the transcript.
"""
