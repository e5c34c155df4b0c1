"""Graduation: what keeps appearing across sessions becomes flat memory, after a person approves it.

``candidates`` finds what qualifies (docs/graduation.md), ``drafts`` and ``draft_backends``
word it (a model or the offline wording in ``wording``) held to grounding rules with
``provenance`` (the sessions and events it cites), ``nightly`` runs the whole round,
``review`` and ``review_prompt`` take the person's decision, and ``seed`` brings flat memory
back into the warm graph as anchors.
"""
