"""Settings: environment variables win over ``$ROLLING_GRAPH_HOME/config.toml``.

One typed object per strategy (gate, decay, render, probe), with named presets, so no
function hides a magic number. Stdlib only: this is imported by the hook process.
"""

from __future__ import annotations

import os

from rolling_graph.core.clock import SYSTEM, Clock
from rolling_graph.core.errors import RollingGraphError

TYPE_CHECKING = False  # keep typing, dataclasses and pathlib off the hook path (import cost)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class ConfigError(RollingGraphError, ValueError):
    """A configuration value is wrong; the message says which and what to do."""


class _Strategy:
    """A small immutable settings record: class attributes are the defaults.

    (A frozen dataclass would do, but ``dataclasses`` pulls in ``inspect``, which costs
    several milliseconds in a hook process that runs before every prompt.)
    """

    def __init__(self, **overrides: Any) -> None:
        for key, value in overrides.items():
            if key.startswith("_") or not hasattr(type(self), key):
                raise TypeError(f"unknown setting {key!r}")
            default = getattr(type(self), key)
            if isinstance(default, bool) != isinstance(value, bool) or (
                isinstance(default, (int, float)) and not isinstance(value, (int, float))
            ) or (isinstance(default, str) and not isinstance(value, str)):
                raise TypeError(f"setting {key!r} must be {type(default).__name__}, got {value!r}")
            if isinstance(default, float) and isinstance(value, int):
                value = float(value)
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("settings are immutable; use replace()")

    @classmethod
    def field_names(cls) -> list[str]:
        return [k for k, v in vars(cls).items() if not k.startswith("_") and not callable(v) and not isinstance(v, (property, classmethod))]

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.field_names()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_dict()!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]


def replace(obj: Any, **changes: Any) -> Any:
    """A copy of a settings record with some fields changed."""
    values = obj.as_dict()
    values.update(changes)
    return type(obj)(**values)


class GateSettings(_Strategy):
    #: Dead man's switch: force a probe after this many events with none.
    dead_man_events = 8
    #: New file paths alone fire only once this many unseen ones accumulated.
    new_paths_to_fire = 6
    #: Minimum events between two probes fired by "soft" triggers (entities, domain shift).
    soft_cooldown_events = 3


class DecaySettings(_Strategy):
    """``new = weight * (1 - decay_rate * distance_factor) * time_factor`` (docs/architecture.md).

    See :mod:`rolling_graph.core.decay` for how the two factors are read.
    """

    #: Per-hop decay rate, applied once per probe cycle.
    decay_rate = 0.04
    #: Distance factor is hops from focus, capped at this many hops (unreachable = cap).
    max_hops = 4
    #: Recency half-life (hours since ``last_activated``): a node activated this recently
    #: resists distance decay by half.
    half_life_hours = 2.0
    #: Half-life of the slow time factor, in hours of wall time between decay passes.
    time_half_life_hours = 168.0
    #: How much one activation raises a weight toward 1 (``w + (1-w)*gain``).
    activation_gain = 0.3
    #: How much a weakening lowers a weight (``w * (1-loss)``).
    weaken_loss = 0.3
    #: Anchors (seeded from flat memory) never decay below this.
    anchor_floor = 0.2
    #: Focus cluster size bounds.
    focus_min = 3
    focus_max = 5


class RenderSettings(_Strategy):
    #: Hard budget of one LOD injection (``ROLLING_GRAPH_BUDGET_TOKENS``).
    budget_tokens = 800
    #: Budget of a delta injection on a prompt (only what is new since the last one).
    delta_budget_tokens = 300
    #: Budget of a proactive injection on a tool result.
    tool_budget_tokens = 120
    #: Tool-time notes from earlier sessions (rolling_graph.render.notes); ``ROLLING_GRAPH_NOTES=off``.
    notes = True
    #: Budget of one note (its tags included).
    note_tokens = 130
    #: All that a session's prompts and tools are told, at most: notes, the prompts' news and named branches.
    note_session_tokens = 1500
    #: Pace: note characters per 100 hook events, one note's worth ahead.
    note_pace_chars = 1200
    #: Characters per token used by the conservative token estimate.
    chars_per_token = 3.0
    #: Hard cap of Claude Code's hook output strings.
    max_chars = 10_000


class ProbeSettings(_Strategy):
    #: Wall-clock cap of one detached probe process (it loops while events keep coming).
    max_rounds = 5
    backend = "auto"  # auto | anthropic | ollama | claude | offline
    mode = "async"  # async | sync
    anthropic_model = "claude-haiku-4-5"
    ollama_model = "llama3.2"
    ollama_host = "http://127.0.0.1:11434"
    timeout_s = 30.0
    #: The ``claude`` backend: the user's Claude Code CLI (its login) runs the probe call.
    claude_model = "claude-haiku-4-5"
    claude_command = "claude"
    #: Wall clock of one ``claude -p`` run (start-up included); then its process group is killed.
    claude_timeout_s = 60.0
    session_token_cap = 200_000
    daily_token_cap = 2_000_000


class DbSettings(_Strategy):
    #: Seconds without a client before the embedded PostgreSQL is stopped (0: never).
    idle_stop_s = 600.0


class GraduationSettings(_Strategy):
    """When a warm-graph node graduates to flat memory (``[graduation]`` in config.toml;
    see :mod:`rolling_graph.graduation.candidates` and docs/graduation.md)."""

    #: Cross-session frequency: the node appeared in at least this many sessions.
    min_sessions = 3
    #: Warm weight: the node is currently relevant.
    min_weight = 0.6
    #: Edge count: the node is connected to several concepts.
    min_edges = 2
    #: A node that a newer one ``supersedes`` (an outdated decision) never graduates.
    skip_superseded = True
    #: A draft at least this similar (cosine, same embedding model) to an existing flat
    #: memory is a duplicate of it, not a new proposal.
    duplicate_similarity = 0.92
    #: Anchors at their floor this long are queued for archive review (six weeks).
    archive_after_days = 42
    #: A graduated memory unchanged this long counts as "kept" (30 days).
    kept_after_days = 30
    #: At most this many drafts per nightly run (bounds model spend).
    max_drafts_per_run = 20
    #: Journal events cited per draft, most recent first.
    events_per_draft = 8
    #: Seed weights by flat-memory kind, and the anchors' decay floor.
    weight_correction = 0.9
    weight_decision = 0.8
    weight_preference = 0.7
    weight_note = 0.6
    anchor_floor = 0.2
    #: "At the floor" tolerance for float weights.
    floor_epsilon = 0.001


#: Named graduation presets; ``[graduation] preset = "strict"`` in config.toml picks one, and
#: the section's other keys override single fields.
GRADUATION_PRESETS: dict[str, GraduationSettings] = {
    "default": GraduationSettings(),
    "eager": GraduationSettings(min_sessions=2, min_weight=0.5, min_edges=1),
    "strict": GraduationSettings(min_sessions=5, min_weight=0.7, min_edges=3, duplicate_similarity=0.88),
}
#: Embedders of the warm graph (``ROLLING_GRAPH_EMBEDDER``; see :mod:`rolling_graph.warm.embeddings`).
EMBEDDERS = ("auto", "ollama", "lexical", "mxbai-embed-large", "lexical-hash-v1")
#: Environment variables a detached child must see as this process's settings saw them.
_CHILD_ENV_PREFIX = "ROLLING_GRAPH_"


class Settings:
    """All settings. ``home`` is the state directory; the rest are strategy records."""

    def __init__(
        self,
        home: Path | str,
        dsn: str | None = None,
        gate: GateSettings | None = None,
        decay: DecaySettings | None = None,
        render: RenderSettings | None = None,
        probe: ProbeSettings | None = None,
        warm: bool = True,
        db: DbSettings | None = None,
        graduation: GraduationSettings | None = None,
        clock: Clock | None = None,
        embedder: str = "auto",
        reviewer: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        #: The state directory as a string; :attr:`home` is the same as a ``Path``.
        self.home_dir = os.fspath(os.path.expanduser(home))
        self.dsn = dsn
        #: Whether hooks start warm-graph work (reconcile, pull, recover). ROLLING_GRAPH_WARM=off
        #: keeps a session purely local (tests, replays, users without a database).
        self.warm = warm
        self.gate = gate or GateSettings()
        self.decay = decay or DecaySettings()
        self.render = render or RenderSettings()
        self.probe = probe or ProbeSettings()
        self.db = db or DbSettings()
        self.graduation = graduation or GraduationSettings()
        #: Where every timestamp comes from (``ROLLING_GRAPH_NOW`` pins it; see :meth:`at`).
        self.clock = clock or SYSTEM
        #: The warm graph's embedder choice: auto | ollama | lexical (``ROLLING_GRAPH_EMBEDDER``).
        self.embedder = embedder
        #: Who approves graduation drafts (``ROLLING_GRAPH_REVIEWER``; None: the login name).
        self.reviewer = reviewer
        #: The ``ROLLING_GRAPH_*`` variables these settings were read from (see :meth:`child_env`).
        self.env = dict(env or {})

    def at(self, when: str) -> Settings:
        """A copy whose clock is pinned at ``when`` (ISO 8601): how a replay sets the time of
        each event without touching ``os.environ``."""
        copy = object.__new__(Settings)
        copy.__dict__.update(self.__dict__)
        copy.clock = Clock.at(when)
        copy.env = {**self.env, "ROLLING_GRAPH_NOW": when}
        return copy

    def child_env(self) -> dict[str, str]:
        """The environment of a process these settings start (probe, worker): this process's
        environment with the variables the settings were read from, the state directory
        and a pinned clock, so the child reads the same settings."""
        return {**os.environ, **self.env, "ROLLING_GRAPH_HOME": self.home_dir}

    @property
    def home(self) -> Path:
        from pathlib import Path  # ~7 ms to import: only paid off the hook's hot path

        return Path(self.home_dir)

    def __repr__(self) -> str:
        return f"Settings(home={self.home_dir!r}, dsn={'set' if self.dsn else None}, probe={self.probe.backend}/{self.probe.mode})"

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"


#: Named presets for the render budget (``ROLLING_GRAPH_BUDGET_TOKENS`` overrides).
BUDGET_PRESETS: dict[str, int] = {"lean": 400, "default": 800, "rich": 1500}

_PROBE_BACKENDS = ("auto", "anthropic", "ollama", "claude", "offline")
#: Set in the environment of a ``claude`` probe's child: every rgraph-hook in it returns at once.
PROBE_CHILD_ENV = "ROLLING_GRAPH_PROBE_CHILD"
_PROBE_MODES = ("async", "sync")


def default_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The state directory: ``$ROLLING_GRAPH_HOME``, else ``~/.claude/rolling-graph``.

    Never ``$CLAUDE_PLUGIN_DATA``: Claude Code sets it for the plugin's hooks but not for a
    terminal, so state kept there was invisible to ``rgraph`` (see :mod:`rolling_graph.store.adopt`)."""
    env = os.environ if env is None else env
    if env.get("ROLLING_GRAPH_HOME"):
        return os.path.expanduser(env["ROLLING_GRAPH_HOME"])
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude", "rolling-graph")


def _section(data: dict[str, Any], name: str, cls: type[_Strategy]) -> Any:
    raw = data.get(name, {})
    if not isinstance(raw, dict):
        raise ConfigError(f"config.toml: [{name}] must be a table")
    known = cls.field_names()
    for key in raw:
        if key not in known:
            raise ConfigError(f"config.toml: unknown setting {name}.{key} (known: {', '.join(known)})")
    try:
        return cls(**raw)
    except TypeError as exc:
        raise ConfigError(f"config.toml: [{name}] {exc}") from exc


def _positive_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = BUDGET_PRESETS.get(text.strip().lower(), -1) if name == "ROLLING_GRAPH_BUDGET_TOKENS" else -1
    if value <= 0:
        raise ConfigError(f"{name}={text!r} must be a positive whole number")
    return value


def load_settings(env: dict[str, str] | os._Environ[str] | None = None) -> Settings:
    """Read settings. Raises :class:`ConfigError` with a one-line, actionable message."""
    env = os.environ if env is None else env
    home = default_home(env)
    data: dict[str, Any] = {}
    cfg = os.path.join(home, "config.toml")
    if os.path.exists(cfg) and not os.path.isfile(cfg):
        raise ConfigError(f"{cfg} is not a file; move it away (a directory there is not a configuration)")
    if os.path.isfile(cfg):
        import tomllib  # only when a config file exists

        try:
            with open(cfg, encoding="utf-8") as fh:
                data = tomllib.loads(fh.read())
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{cfg}: cannot read config ({exc}); fix or delete the file") from exc
    gate = _section(data, "gate", GateSettings)
    decay = _section(data, "decay", DecaySettings)
    render = _section(data, "render", RenderSettings)
    probe = _section(data, "probe", ProbeSettings)
    db = _section(data, "db", DbSettings)
    dsn = data.get("dsn")
    if dsn is not None and not isinstance(dsn, str):
        raise ConfigError("config.toml: dsn must be a string (a PostgreSQL connection URL)")

    if env.get("ROLLING_GRAPH_DSN"):
        dsn = env["ROLLING_GRAPH_DSN"]
    if env.get("ROLLING_GRAPH_PROBE"):
        probe = replace(probe, backend=env["ROLLING_GRAPH_PROBE"].strip().lower())
    if env.get("ROLLING_GRAPH_PROBE_MODE"):
        probe = replace(probe, mode=env["ROLLING_GRAPH_PROBE_MODE"].strip().lower())
    if env.get("ROLLING_GRAPH_BUDGET_TOKENS"):
        render = replace(render, budget_tokens=_positive_int("ROLLING_GRAPH_BUDGET_TOKENS", env["ROLLING_GRAPH_BUDGET_TOKENS"]))
    if env.get("ROLLING_GRAPH_NOTES"):
        flag = env["ROLLING_GRAPH_NOTES"].strip().lower()
        if flag not in ("on", "off", "1", "0", "true", "false"):
            raise ConfigError(f"ROLLING_GRAPH_NOTES={flag!r} must be on or off")
        render = replace(render, notes=flag in ("on", "1", "true"))
    if env.get("ROLLING_GRAPH_DB_IDLE_S"):
        try:
            db = replace(db, idle_stop_s=float(env["ROLLING_GRAPH_DB_IDLE_S"]))
        except ValueError as exc:
            raise ConfigError(f"ROLLING_GRAPH_DB_IDLE_S={env['ROLLING_GRAPH_DB_IDLE_S']!r} must be a number of seconds") from exc
    if env.get("OLLAMA_HOST"):
        host = env["OLLAMA_HOST"]
        probe = replace(probe, ollama_host=host if "://" in host else f"http://{host}")

    warm = data.get("warm", True)
    if env.get("ROLLING_GRAPH_WARM"):
        flag = env["ROLLING_GRAPH_WARM"].strip().lower()
        if flag not in ("on", "off", "1", "0", "true", "false"):
            raise ConfigError(f"ROLLING_GRAPH_WARM={flag!r} must be on or off")
        warm = flag in ("on", "1", "true")
    if not isinstance(warm, bool):
        raise ConfigError("config.toml: warm must be true or false")

    if probe.backend not in _PROBE_BACKENDS:
        where = "ROLLING_GRAPH_PROBE" if env.get("ROLLING_GRAPH_PROBE") else f"{cfg}: [probe] backend"
        raise ConfigError(f"{where}={probe.backend!r} is not one of {', '.join(_PROBE_BACKENDS)}")
    if probe.mode not in _PROBE_MODES:
        where = "ROLLING_GRAPH_PROBE_MODE" if env.get("ROLLING_GRAPH_PROBE_MODE") else f"{cfg}: [probe] mode"
        raise ConfigError(f"{where}={probe.mode!r} is not one of {', '.join(_PROBE_MODES)}")
    if render.budget_tokens < 50:
        raise ConfigError(f"budget_tokens={render.budget_tokens} is too small; use at least 50")
    if min(render.note_tokens, render.note_session_tokens, render.note_pace_chars) < 0:
        raise ConfigError("config.toml: [render] note_tokens, note_session_tokens and note_pace_chars must be 0 or more")
    graduation = _graduation(data)
    clock = None
    if env.get("ROLLING_GRAPH_NOW"):
        try:
            clock = Clock.at(env["ROLLING_GRAPH_NOW"])
        except ValueError as exc:
            raise ConfigError(f"ROLLING_GRAPH_NOW: {exc}") from None
    embedder = (env.get("ROLLING_GRAPH_EMBEDDER") or "auto").strip().lower()
    if embedder not in EMBEDDERS:
        raise ConfigError(f"ROLLING_GRAPH_EMBEDDER={embedder!r} is not one of auto, ollama, lexical")
    own = {k: v for k, v in env.items() if k.startswith(_CHILD_ENV_PREFIX)}
    return Settings(home=home, dsn=dsn, gate=gate, decay=decay, render=render, probe=probe, warm=warm, db=db,
                    graduation=graduation, clock=clock, embedder=embedder, reviewer=env.get("ROLLING_GRAPH_REVIEWER") or None, env=own)


def _graduation(data: dict[str, Any]) -> GraduationSettings:
    """``[graduation]``: a named preset, then single fields overriding it."""
    section = data.get("graduation", {})
    if not isinstance(section, dict):
        raise ConfigError("config.toml: [graduation] must be a table")
    values = dict(section)
    preset = values.pop("preset", "default")
    if preset not in GRADUATION_PRESETS:
        raise ConfigError(f"config.toml: graduation.preset={preset!r} is not one of {', '.join(GRADUATION_PRESETS)}")
    known = GraduationSettings.field_names()
    for key in values:
        if key not in known:
            raise ConfigError(f"config.toml: unknown setting graduation.{key} (known: preset, {', '.join(known)})")
    try:
        return GraduationSettings(**{**GRADUATION_PRESETS[preset].as_dict(), **values})
    except TypeError as exc:
        raise ConfigError(f"config.toml: [graduation] {exc}") from exc
