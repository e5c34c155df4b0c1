"""The hot graph's values and the arithmetic on them: what every other package builds on.

The document's shape (``types``, ``model``, ``ids``, ``facts``; ``normalize`` makes a loaded
file fit it, once), weights and decay (``weights``, ``decay``, ``focus``, ``adjacency``), the
validation of untrusted RFC 6902 proposals (``patch``), settings and the clock (``config``,
``clock``), the one error tree (``errors``), and the small primitives the hook process
needs without paying for the standard library's heavier modules (``jsonio``, ``lazyre``,
``filepaths``, ``ledger``'s fingerprints, ``detach`` for background processes). Pure
functions where it can be; no file of a session is read or written here.
"""
