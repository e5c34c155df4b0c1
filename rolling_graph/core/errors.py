"""The one error tree a user can act on.

Every error that reaches a person derives from :class:`RollingGraphError`; its message is one
line that says what is wrong and what to do. ``rgraph`` turns any of them into that line on
stderr (prefixed ``rgraph:``) and exit code 1, in one place (:mod:`rolling_graph.cli.console`),
with the detail in ``$ROLLING_GRAPH_HOME/logs/cli.log``. Hooks never show them: they log them.

    RollingGraphError
    ├── UserError              a command was asked for something it cannot do
    ├── config.ConfigError     a setting is wrong (names the variable or the file)
    ├── ids.InvalidSessionId
    ├── reconcile.db.DatabaseUnavailable   the warm graph cannot be reached (and what to try)
    └── reconcile.server.EmbeddedServerError
"""

from __future__ import annotations


class RollingGraphError(Exception):
    """Base of every error a person can act on; the message is one actionable line."""


class UserError(RollingGraphError):
    """A command was asked for something it cannot do: a bad argument, an unknown session."""
