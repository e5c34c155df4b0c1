"""How ``rgraph … --help`` shows parameters: flags without a type, lists by their element.

typer 0.29 prints a Python type beside every parameter: ``--json <bool>``, ``--help <bool>``,
``TRANSCRIPTS <list[Path]>``. A flag takes no value, so it shows none; a repeatable option shows
the type of one value (``--budget <int>``); an argument with a metavar shows no type (the
usage line reads ``{TRANSCRIPT}...``), one without shows the type of one value. :func:`tidy_help` applies this to a whole app in one place.

typer builds its parameter objects itself, with no hook to choose their class; so each
command's :meth:`get_params` re-classes them to subclasses that differ only in how they
display (same fields, same parsing).
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePath
from typing import Any, get_args

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.models import DefaultPlaceholder


def _element(param: TyperArgument | TyperOption) -> str | None:
    """``<int>`` for a ``list[int]`` parameter (``<path>`` for paths), else None."""
    desc = param.type_descriptor
    if not desc.is_list:
        return None
    args = get_args(desc.annotation)
    if len(args) != 1:
        return None
    elem = args[0]
    if isinstance(elem, type) and issubclass(elem, PurePath):
        return "<path>"
    return f"<{elem.__name__ if isinstance(elem, type) else elem}>"


class _Option(TyperOption):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is None and (elem := _element(self)) is not None:
            return elem
        return super().display_type_rich(ctx)


class _Argument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return None  # the name column already says what to give
        return _element(self) or super().display_type_rich(ctx)


def _tidy_param(param: object) -> None:
    if type(param) is TyperOption:
        param.__class__ = _Option
    elif type(param) is TyperArgument:
        param.__class__ = _Argument


class _TidyParams:
    """Mixin for a click command: its parameters display as this module says."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            _tidy_param(param)
        return params


@cache
def _tidy_class(base: type) -> type:
    if issubclass(base, _TidyParams):
        return base
    return type(base.__name__, (_TidyParams, base), {"__module__": base.__module__, "__doc__": base.__doc__})


def tidy_help(app: typer.Typer) -> None:
    """Make every command of ``app`` (sub-apps included) display its parameters as above.

    Call after every command is registered; keeps each command's own class (the root's
    error handler, for one) by subclassing it.
    """
    app.info.cls = _tidy_class(_chosen(app.info.cls) or TyperGroup)
    for command in app.registered_commands:
        command.cls = _tidy_class(command.cls or TyperCommand)
    for group in app.registered_groups:
        if _chosen(group.cls) is not None:  # a class given to add_typer() wins over the sub-app's own
            group.cls = _tidy_class(_chosen(group.cls))
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)


def _chosen(cls: Any) -> type | None:
    """The class a Typer setting names, or None when left at typer's default."""
    value = cls.value if isinstance(cls, DefaultPlaceholder) else cls
    return value if isinstance(value, type) else None
