"""The probe: what a batch of events means for the graph, as RFC 6902 operations to validate.

``runner`` takes the batch the gate queued (in a detached process, or inline in sync mode),
``select`` chooses the backend under the cost caps (``usage``): Haiku through the Anthropic
SDK (``anthropic_probe``), the ``claude`` CLI (``claude_probe``), a local model through
Ollama (``ollama_probe``), or the offline extractor (``offline`` with its parts
``offline_tools``, ``offline_commands``, ``offline_tasks``, ``offline_mentions``, writing
through one ``proposal``). ``prompting`` builds a model's prompt, ``transcript_tail`` and
``tool_output``/``code_names`` read what the session said; every answer is validated by
``rolling_graph.core.patch`` and applied all or nothing.
"""
