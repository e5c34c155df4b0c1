"""A session's files on disk: the sidecar, its journal, and everything that keeps them whole.

``sidecar.SidecarStore`` is where a session's graph and hook state change, under a lock,
journal first (``journal``), then an atomic replace (``atomic``); ``files`` knows where each
file lives and how it is read and written, ``repair`` and ``shape`` rebuild what is missing
or wrong-shaped from the journal, ``graph_cache``, ``index`` and ``branches`` are what the
hook reads instead of the whole graph. ``project`` says which project a session belongs to,
``userfile`` reads paths someone else named, ``adopt`` takes over what older versions left,
``forget`` removes what the user asks to have removed.
"""
