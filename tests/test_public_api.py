"""Every name `rolling_graph` advertises resolves; unknown names fail clearly."""

from __future__ import annotations

import pytest

import rolling_graph


@pytest.mark.parametrize("name", rolling_graph.__all__)
def test_each_public_name_resolves(name: str) -> None:
    assert getattr(rolling_graph, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rolling_graph.nope  # noqa: B018


def test_the_spelled_out_list_is_the_list_the_package_resolves() -> None:
    assert sorted(rolling_graph._EXPORTS) == rolling_graph.__all__


def test_each_public_name_has_its_real_type_for_the_type_checker() -> None:
    """The names resolve lazily at run time; the type checker reads them from the
    ``TYPE_CHECKING`` imports, so a caller's ``rolling_graph.load_settings`` is typed, not Any."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(rolling_graph.__file__).read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    typed = {alias.asname or alias.name for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert set(rolling_graph.__all__) <= typed
