"""Measurements of what the memory carries: never on the hook's or the warm graph's import path.

``fixtures`` scores our gold-labelled fixtures, ``corpus`` and ``points`` the recorded
sessions of ``../shared/corpus`` at their compactions and at every Nth event, ``chain`` and
``chain_eval`` a project's sessions replayed in order into one warm graph (the startup
block of each new session).
"""
