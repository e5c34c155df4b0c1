#!/usr/bin/env python3
"""Run the evaluation (same code as ``rgraph eval``) on the bundled fixtures.

Usage: python bench/eval.py [--budget 800 --budget 400] [--fixture NAME] [--json]
"""

from __future__ import annotations

import sys

import typer

from rolling_graph.cli.eval import register


def main() -> None:
    app = typer.Typer(add_completion=False)
    register(app)

    @app.callback()
    def _root() -> None:  # a group, so the command is addressed as `eval`
        pass

    app(["eval", *sys.argv[1:]], prog_name="bench/eval.py")


if __name__ == "__main__":
    main()
