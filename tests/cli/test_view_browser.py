"""rgraph view in headless Chromium: loads offline without errors, draws every node, not blank.

Needs Debian's ``chromium`` package (``apt-get install -y chromium``); skipped without it.
The page reports on itself in ``#rg-status`` (ready flag, error count, nodes in the page),
which ``--dump-dom`` lets us read; the screenshot is decoded with the stdlib (zlib) only.
The 300-node default view, search, filters and verbs: ``test_view_interactive.py``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from cdp_browser import BASE_ARGS, CHROMIUM, SKIP_REASON, read_png
from inspect_builders import HOSTILE_LABEL, settings_for, storage_session

from rolling_graph.cli.sessions import load_document, load_journal
from rolling_graph.cli.view_html import DOMAIN_COLORS, render_html
from rolling_graph.core.model import make_node

pytestmark = pytest.mark.browser

if CHROMIUM is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

PG = "use-postgresql-for-the-warm-store"
SQLITE = "use-sqlite-for-the-warm-store"


def chromium(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [
        str(CHROMIUM),
        *BASE_ARGS,
        "--disable-quic",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        "--virtual-time-budget=3000",
        *extra,
        url,
    ]
    env = {"HOME": str(tmp), "PATH": "/usr/bin:/bin"}
    return subprocess.run(args, capture_output=True, text=True, timeout=90, env=env, check=False)


def dump_dom(tmp: Path, page: Path, fragment: str = "") -> str:
    result = chromium(tmp, page.as_uri() + fragment, "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def status_of(dom: str) -> dict[str, str]:
    tag = re.search(r'<div id="rg-status"([^>]*)>', dom)
    assert tag, "the page never rendered its status element"
    return dict(re.findall(r'data-([a-z]+)="([^"]*)"', tag.group(1)))


@pytest.fixture()
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROLLING_GRAPH_NOW", "2026-11-25T21:20:00Z")
    settings = settings_for(tmp_path / "home")
    sid = storage_session(settings)
    target = tmp_path / "graph.html"
    target.write_text(render_html(load_document(settings, sid), load_journal(settings, sid)), encoding="utf-8")
    return target


def test_page_loads_without_errors_and_draws_every_node(page: Path, tmp_path: Path) -> None:
    dom = dump_dom(tmp_path, page)
    status = status_of(dom)
    assert status["errors"] == "0", re.findall(r'<ul id="rg-errors">(.*?)</ul>', dom)
    assert status["ready"] == "1"
    assert status["nodes"] == "7" and status["edges"] == "3"
    assert len(re.findall(r'<g class="node[a-z ]*" data-id=', dom)) == 7
    assert len(re.findall(r'<line [^>]*class="edge supersedes', dom)) == 1
    assert dom.count('class="node focus') == 3
    assert "<img" not in dom  # the hostile label stayed text
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in dom


def test_clicking_a_node_shows_its_details_and_provenance(page: Path, tmp_path: Path) -> None:
    dom = dump_dom(tmp_path, page, f"#node={SQLITE}")
    assert status_of(dom)["errors"] == "0"
    panel = dom[dom.index('<aside id="rg-details">') : dom.index("</aside>")]
    assert "<h2>Use SQLite for the warm store</h2>" in panel
    assert "Superseded by: Use PostgreSQL for the warm store" in panel
    assert "Provenance (2)" in panel
    assert "probe offline · event e1" in panel and "The user chose SQLite." in panel
    assert f'data-id="{SQLITE}"' in dom and 'class="node superseded selected"' in dom


def test_screenshot_is_not_blank_and_shows_domain_colours(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=800,500")
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    width, height, bpp, pixels = read_png(shot)
    colours = {pixels[i : i + 3] for i in range(0, len(pixels), bpp)}
    assert len(colours) > 50, "the screenshot is (nearly) blank"
    for domain in ("technical", "project", "personal", "relationship"):
        rgb = bytes.fromhex(DOMAIN_COLORS[domain][1:])
        assert rgb in colours, f"no {domain} node visible"


def test_large_graph_renders_within_limit_without_errors(tmp_path: Path) -> None:
    doc = {"session_id": "big", "nodes": {}, "edges": {}, "focus": []}
    domains = ("technical", "project", "personal", "relationship")
    for i in range(600):
        node = make_node(
            f"Concept {i} {HOSTILE_LABEL if i == 7 else ''}", domains[i % 4], node_id=f"n{i}", weight=(i % 10) / 10
        )
        doc["nodes"][node["id"]] = node
    for i in range(1, 600):
        doc["edges"][f"n{i}|informs|n{i // 2}"] = {
            "source": f"n{i}",
            "target": f"n{i // 2}",
            "relationship": "informs",
            "strength": 0.5,
        }
    doc["focus"] = ["n9", "n19", "n29"]
    target = tmp_path / "big.html"
    target.write_text(render_html(doc, [], limit=300), encoding="utf-8")
    status = status_of(dump_dom(tmp_path, target))
    assert status == {"ready": "1", "errors": "0", "nodes": "300", "edges": status["edges"]}
    assert int(status["edges"]) > 100
