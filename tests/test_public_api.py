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
