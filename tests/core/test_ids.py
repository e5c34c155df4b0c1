"""core/ids.py: node ids from labels, for every script a label is written in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.filepaths import file_id
from rolling_graph.core.ids import ID_MAX, is_node_id, slugify


def test_a_latin_label_is_its_ascii_slug() -> None:
    assert slugify("Use PostgreSQL!") == "use-postgresql"
    assert slugify("módulo uno.py") == "m-dulo-uno-py"  # as before: Latin letters beyond ASCII drop out
    assert slugify("") == slugify("!!!") == "node"


def test_labels_in_chinese_japanese_korean_or_cyrillic_are_ids_of_their_own() -> None:
    # Their letters leave nothing in an ASCII slug: every such request was the one node
    # "req-node", and two such files of one directory one file.
    requests = ["設定ファイルの読み込みを直してください", "修复登录页面的错误", "테스트가 실패합니다", "Почини функцию"]
    assert len({slugify(r) for r in requests}) == len(requests)
    assert "node" not in {slugify(r) for r in requests}
    assert file_id("src/設定.py") != file_id("src/接続.py")
    assert slugify("Почини parse_config").endswith("-parse-config")
    assert slugify("設定ファイル") == slugify("設定ファイル")  # stable


@given(st.text(max_size=200))
def test_every_label_gives_a_valid_id_and_so_does_a_request_id_cut_from_it(label: str) -> None:
    slug = slugify(label)
    assert is_node_id(slug) and len(slug) <= ID_MAX
    assert is_node_id(("req-" + slug)[:ID_MAX])
