"""Secrets and untrusted text: what never reaches disk, a model or the warm graph as it came.

``redact`` is the one entry (``<private>`` spans first, then secrets: the project's own rules
in ``rules``, and Yelp's detect-secrets in ``secrets_library`` in the detached processes
only); ``cues`` says cheaply whether a text could hold a secret at all, so the hook pays
for a regular expression only where one can match; ``private`` reads the user's
``<private>`` spans; ``sanitize`` makes any untrusted text one safe, bounded line. Stdlib
only, and nothing else of this package: every layer above may use it.
"""
