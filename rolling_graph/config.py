"""Settings: environment variables win over ``$ROLLING_GRAPH_HOME/config.toml``.

One typed object per strategy (gate, decay, render, probe), with named presets, so no
function hides a magic number. Stdlib only: this is imported by the hook process.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # keep typing, dataclasses and pathlib off the hook path (import cost)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class ConfigError(ValueError):
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
        return type(self) is type(other) and self.as_dict() == other.as_dict()  # type: ignore[union-attr]

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
    """The spec's ``new = weight * (1 - decay_rate * distance_factor) * time_factor``.

    See :mod:`rolling_graph.decay` for how the two factors are read.
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
    #: Characters per token used by the conservative token estimate.
    chars_per_token = 3.0
    #: Hard cap of Claude Code's hook output strings.
    max_chars = 10_000


class ProbeSettings(_Strategy):
    #: Wall-clock cap of one detached probe process (it loops while events keep coming).
    max_rounds = 5
    backend = "auto"  # auto | anthropic | ollama | offline
    mode = "async"  # async | sync
    anthropic_model = "claude-haiku-4-5"
    ollama_model = "llama3.2"
    ollama_host = "http://127.0.0.1:11434"
    timeout_s = 30.0
    session_token_cap = 200_000
    daily_token_cap = 2_000_000


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

_PROBE_BACKENDS = ("auto", "anthropic", "ollama", "offline")
_PROBE_MODES = ("async", "sync")


def default_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The state directory: ``$ROLLING_GRAPH_HOME``, else ``$CLAUDE_PLUGIN_DATA``, else
    ``~/.claude/rolling-graph``."""
    env = os.environ if env is None else env
    if env.get("ROLLING_GRAPH_HOME"):
        return os.path.expanduser(env["ROLLING_GRAPH_HOME"])
    if env.get("CLAUDE_PLUGIN_DATA"):
        return os.path.expanduser(env["CLAUDE_PLUGIN_DATA"])
    return os.path.join(os.path.expanduser("~"), ".claude", "rolling-graph")


def _section(data: dict[str, Any], name: str, cls: type) -> Any:
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
        raise ConfigError(f"ROLLING_GRAPH_PROBE={probe.backend!r} is not one of {', '.join(_PROBE_BACKENDS)}")
    if probe.mode not in _PROBE_MODES:
        raise ConfigError(f"ROLLING_GRAPH_PROBE_MODE={probe.mode!r} is not one of {', '.join(_PROBE_MODES)}")
    if render.budget_tokens < 50:
        raise ConfigError(f"budget_tokens={render.budget_tokens} is too small; use at least 50")
    return Settings(home=home, dsn=dsn, gate=gate, decay=decay, render=render, probe=probe, warm=warm)
