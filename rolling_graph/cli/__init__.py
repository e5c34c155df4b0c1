"""The ``rgraph`` command line: a thin shell that parses, calls the library and prints.

``main`` registers every command (typer) and turns the library's errors into one line
(``console``); each module is one command or group: ``show``, ``view`` (an HTML page),
``stats``, ``forget``, ``replay`` and ``demo``, ``eval``, and the warm graph's ``warm``
(``reconcile``, ``recover``, ``db``, ``reembed``) and ``graduation`` (``graduate``,
``review``, ``seed``) commands. A command that needs the database or a model SDK imports it
inside the command, so ``rgraph`` starts without them.
"""
