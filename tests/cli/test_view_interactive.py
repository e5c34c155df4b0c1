"""rgraph view at 300 nodes, driven in headless Chromium: the default view shows the focus
and its neighbours with no two labels overlapping; search, the kind and domain filters, edge
verbs, show all and expand work; the layout is the same on every load.

Label boxes are measured by the test's own script in the page (``getBoundingClientRect`` of
every drawn node label), so the check does not trust the page's layout code. Screenshots go
to the test's tmp directory; their paths are printed (``pytest -s``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cdp_browser import CHROMIUM, SKIP_REASON, Browser, cli_screenshot, read_png
from inspect_builders import HOSTILE_LABEL

from rolling_graph.cli.view_html import render_html, script_text
from rolling_graph.core.model import VERBS, make_node

pytestmark = pytest.mark.browser

if CHROMIUM is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

SIZE = (1400, 900)
KIND_PLAN = {
    "file": 64,
    "symbol": 44,
    "command": 34,
    "error": 20,
    "decision": 26,
    "correction": 8,
    "request": 20,
    "task": 26,
    "commit": 12,
    "concept": 22,
    "entity": 14,
    "preference": 10,
}
DIRS = ["src/billing", "src/billing/adapters/stripe/webhooks", "tests", "rolling_graph/cli", "docs", "scripts/ci"]
STEMS = ["proration", "invoice", "plan_change", "renewal", "ledger", "refund", "tax", "coupon", "usage", "seats"]
THINGS = ["the proration", "invoice totals", "the renewal date", "refund rounding", "seat counts", "tax lines"]
DOMAIN_OF = {
    "file": "technical",
    "symbol": "technical",
    "command": "technical",
    "error": "technical",
    "concept": "technical",
    "decision": "project",
    "task": "project",
    "commit": "project",
    "request": "project",
    "entity": "project",
    "correction": "relationship",
    "preference": "personal",
}


def label_for(kind: str, i: int, rng: random.Random) -> str:
    stem, thing = rng.choice(STEMS), rng.choice(THINGS)
    return {
        "file": f"{rng.choice(DIRS)}/{stem}_{i}.py",
        "symbol": f"{rng.choice(['apply', 'compute', 'validate', 'render'])}_{stem}_{i}()",
        "command": f"pytest -q tests/test_{stem}_{i}.py -k {rng.choice(STEMS)}",
        "error": f"AssertionError: {thing} off by one cent in test_{stem}_{i}",
        "decision": f"Use Decimal for {thing} ({i})",
        "correction": f"No: {thing} must follow the billing anchor (#{i})",
        "request": f"Make {thing} match the preview #{i}",
        "task": f"Add a test for {thing} #{i}",
        "commit": f"{rng.getrandbits(28):07x} Fix {thing}",
        "concept": f"{stem.replace('_', ' ').title()} invariant {i}",
        "entity": f"Stripe account {i}",
        "preference": f"Ada prefers small commits ({i})",
    }[kind]


def facts_for(kind: str, i: int) -> dict[str, Any]:
    common = {"seq": 1000 + i, "by": "tool"}
    return {
        "file": {"path": f"src/billing/mod_{i}.py", "edits": i % 7, "reads": 3, "last_op": "edit", "what": "`prorate`"},
        "command": {"runs": 1 + i % 4, "outcome": "fail" if i % 3 else "pass", "result": "2 failed → 0 failed"},
        "error": {"state": "open" if i % 2 else "resolved"},
        "task": {"status": ("pending", "in_progress", "completed")[i % 3]},
        "request": {"by": "user"},
    }.get(kind, {}) | common


def verb_for(source_kind: str, target_kind: str, rng: random.Random) -> str:
    if target_kind == "file" and source_kind in ("task", "commit", "decision", "request"):
        return "edits"
    if source_kind == "command" and target_kind in ("file", "symbol", "error"):
        return "tests"
    if source_kind == "decision" and target_kind == "decision":
        return "supersedes"
    if source_kind == "correction":
        return "contradicts"
    if target_kind == "error":
        return "blocks"
    return rng.choice(["informs", "depends_on", "extends", "decides"])


def coding_session_graph(count: int = 300, seed: int = 14) -> dict[str, Any]:
    """A session graph of ``count`` nodes of every kind (SCHEMA12 facts), hubs grown by
    preferential attachment, labels from 6 to 120 characters (a hostile one too), and a
    focus of five: a request, a decision, a file, an error and a task."""
    rng = random.Random(seed)
    kinds = [k for k, n in KIND_PLAN.items() for _ in range(n)][:count]
    rng.shuffle(kinds)
    doc: dict[str, Any] = {"session_id": "big-300", "project": "/work/billing", "nodes": {}, "edges": {}}
    ids: list[str] = []
    for i, kind in enumerate(kinds):
        label = label_for(kind, i, rng)
        if i == 40:
            label = HOSTILE_LABEL
        if i == 41:
            label = ("Keep the public invoice API stable while the ledger migrates to cents; " * 2)[:120]
        weight = 0.9 if i < 12 else round(rng.betavariate(2, 5), 3)
        node = make_node(label, DOMAIN_OF[kind], kind, node_id=f"{kind}-{i}", weight=weight)
        node["facts"] = facts_for(kind, i)  # type: ignore[typeddict-item]
        doc["nodes"][node["id"]] = node
        ids.append(node["id"])
    degree = [1] * count
    for i in range(1, count):
        for target in set(rng.choices(range(i), weights=degree[:i], k=1 + (rng.random() < 0.55))):
            source_kind, target_kind = kinds[i], kinds[target]
            verb = verb_for(source_kind, target_kind, rng)
            doc["edges"][f"{ids[i]}|{verb}|{ids[target]}"] = {
                "source": ids[i],
                "target": ids[target],
                "relationship": verb,
                "strength": round(0.3 + 0.7 * rng.random(), 2),
            }
            degree[i] += 1
            degree[target] += 1
    focus: list[str] = []
    for kind in ("request", "decision", "file", "error", "task"):
        focus.append(next(nid for nid, k in zip(ids, kinds, strict=True) if k == kind))
    doc["focus"] = focus
    return doc


# --- measuring in the page ------------------------------------------------------------------

LABEL_BOXES = """(() => Array.from(document.querySelectorAll('#rg-graph g.node text')).map(t => {
  const r = t.getBoundingClientRect();
  return {id: t.closest('g.node').getAttribute('data-id'), text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height};
}).filter(b => b.w > 0 && b.h > 0))()"""
VISIBLE = """(() => Array.from(document.querySelectorAll('#rg-graph g.node'))
  .filter(g => g.getBoundingClientRect().width > 0).map(g => g.getAttribute('data-id')))()"""


def overlapping(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of label boxes whose interiors intersect (touching is fine)."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > 0.01 and (
                min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > 0.01
            ):
                out.append((a["text"], b["text"]))
    return out


def assert_labels_apart(browser: Browser) -> list[dict[str, Any]]:
    boxes = browser.eval(LABEL_BOXES)
    clashes = overlapping(boxes)
    assert not clashes, f"{len(clashes)} overlapping label pairs, e.g. {clashes[:5]}"
    return boxes


def errors_of(browser: Browser) -> str:
    return browser.eval(
        "document.getElementById('rg-status').dataset.errors + ' ' + document.getElementById('rg-errors').textContent"
    )


@pytest.fixture(scope="module")
def graph() -> dict[str, Any]:
    return coding_session_graph()


@pytest.fixture(scope="module")
def page(graph: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("view300") / "graph300.html"
    target.write_text(render_html(graph, []), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with Browser(tmp_path_factory.mktemp("chromium") / "profile", *SIZE) as b:
        yield b


@pytest.fixture()
def opened(browser: Browser, page: Path) -> Browser:
    browser.open(page.as_uri())
    assert errors_of(browser).startswith("0 "), errors_of(browser)
    return browser


# --- the default view -----------------------------------------------------------------------


def test_default_view_of_300_nodes_shows_the_focus_and_neighbours_with_no_label_overlapping(
    opened: Browser, graph: dict[str, Any], page: Path, tmp_path: Path
) -> None:
    visible = set(opened.eval(VISIBLE))
    assert set(graph["focus"]) <= visible
    assert 20 <= len(visible) <= 60, f"the default view should be the focus cluster, not {len(visible)} nodes"
    focus, edges = set(graph["focus"]), graph["edges"].values()
    neighbours = {e["source"] for e in edges if e["target"] in focus} | {
        e["target"] for e in edges if e["source"] in focus
    }
    assert visible - focus <= neighbours, "only the focus and its neighbours by default"
    boxes = assert_labels_apart(opened)
    labelled = {b["id"] for b in boxes}
    assert set(graph["focus"]) <= labelled, "every focus node keeps its label"
    assert len(labelled) >= 0.8 * len(visible), f"only {len(labelled)} of {len(visible)} nodes labelled"
    assert all(len(b["text"]) >= 6 for b in boxes)
    # the page as a person first sees it, from Chromium's own --screenshot
    shot = tmp_path / "view-300-default.png"
    result = cli_screenshot(tmp_path / "shot-profile", page.as_uri(), shot, *SIZE)
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    width, height, bpp, pixels = read_png(shot)
    assert (width, height) == SIZE
    assert len({pixels[i : i + 3] for i in range(0, len(pixels), bpp * 7)}) > 50, "the screenshot is (nearly) blank"
    print(f"\nscreenshot of the default view: {shot}")


def test_layout_is_the_same_on_every_load(browser: Browser, page: Path) -> None:
    placement = (
        "Array.from(document.querySelectorAll('#rg-graph g.node')).map(g => "
        "[g.getAttribute('data-id'), g.getAttribute('transform'), g.getAttribute('display'), "
        "g.querySelector('text.label').getAttribute('x'), g.querySelector('text.label').textContent])"
    )
    browser.open(page.as_uri())
    first = browser.eval(placement)
    browser.open(page.as_uri())
    assert browser.eval(placement) == first


# --- search, filters, verbs, show all, expand -----------------------------------------------


def test_search_for_a_hidden_label_shows_highlights_and_centres_it(opened: Browser, graph: dict[str, Any]) -> None:
    hidden = [nid for nid in graph["nodes"] if nid not in set(opened.eval(VISIBLE))]
    wanted = graph["nodes"][hidden[len(hidden) // 2]]
    query = wanted["label"]
    opened.eval(
        "(() => { const s = document.getElementById('rg-search'); s.focus(); s.value = "
        f"{query!r}; s.dispatchEvent(new Event('input', {{bubbles: true}})); }})()"
    )
    opened.wait_for(f"document.getElementById('rg-graph').dataset.query === {query!r}")
    group = f"document.querySelector('#rg-graph g.node[data-id=\"{wanted['id']}\"]')"
    assert opened.eval(f"{group}.getBoundingClientRect().width > 0"), "the match was not brought into view"
    assert opened.eval(f"{group}.classList.contains('match')")
    boxes = assert_labels_apart(opened)
    mine = [b for b in boxes if b["id"] == wanted["id"]]
    assert mine and mine[0]["text"] == (query if len(query) <= 42 else query[:41] + "…")
    centre = opened.eval(
        f"(() => {{ const c = {group}.querySelector('circle').getBoundingClientRect(), "
        "s = document.getElementById('rg-graph').getBoundingClientRect(); "
        "return [c.x + c.width / 2 - (s.x + s.width / 2), c.y + c.height / 2 - (s.y + s.height / 2)]; })()"
    )
    assert abs(centre[0]) < 5 and abs(centre[1]) < 5, f"the match is not centred: off by {centre}"
    assert "match" in opened.eval("document.getElementById('rg-matches').textContent")
    assert opened.eval("document.querySelector('#rg-details h2').textContent") == query


def test_search_keeps_a_hostile_label_as_text(opened: Browser) -> None:
    opened.eval(
        "(() => { const s = document.getElementById('rg-search'); s.value = 'onerror=alert'; "
        "s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()"
    )
    opened.wait_for("document.getElementById('rg-graph').dataset.query === 'onerror=alert'")
    assert opened.eval("document.getElementById('rg-matches').textContent") == "1 match"
    assert opened.eval("document.querySelectorAll('img').length") == 0
    assert opened.eval("document.querySelector('#rg-details h2').textContent") == HOSTILE_LABEL
    assert_labels_apart(opened)


def test_kind_filter_hides_a_kind_and_domain_filter_a_domain(opened: Browser, graph: dict[str, Any]) -> None:
    kinds = {graph["nodes"][nid]["kind"] for nid in opened.eval(VISIBLE)}
    assert "file" in kinds
    opened.eval("document.querySelector('#rg-kinds input[data-kind=\"file\"]').click()")
    left = opened.eval(VISIBLE)
    assert left and not [nid for nid in left if graph["nodes"][nid]["kind"] == "file"]
    assert_labels_apart(opened)
    opened.eval("document.querySelector('#rg-kinds input[data-kind=\"file\"]').click()")
    assert any(graph["nodes"][nid]["kind"] == "file" for nid in opened.eval(VISIBLE))
    opened.eval("document.querySelector('#rg-domains input[data-domain=\"technical\"]').click()")
    left = opened.eval(VISIBLE)
    assert left and all(graph["nodes"][nid]["domain"] != "technical" for nid in left)
    assert_labels_apart(opened)


def test_the_selected_focus_edges_carry_verbs_and_hovering_a_node_draws_its_verbs(
    opened: Browser, graph: dict[str, Any]
) -> None:
    selected = opened.eval("document.querySelector('#rg-graph g.node.selected').getAttribute('data-id')")
    assert selected == graph["focus"][0]
    drawn = opened.eval(
        "Array.from(document.querySelectorAll('#rg-graph .verbs:not(.hover) text')).map(t => t.textContent)"
    )
    own = [e["relationship"] for e in graph["edges"].values() if selected in (e["source"], e["target"])]
    assert drawn and set(drawn) <= set(own) <= set(VERBS)
    # hover a visible, unselected node with a visible edge: its verbs appear on top
    visible = set(opened.eval(VISIBLE))
    edge = next(
        e
        for e in graph["edges"].values()
        if {e["source"], e["target"]} <= visible and selected not in (e["source"], e["target"])
    )
    node = edge["source"]
    x, y = opened.eval(
        f"(() => {{ const c = document.querySelector('#rg-graph g.node[data-id=\"{node}\"] circle').getBoundingClientRect(); "
        "return [c.x + c.width / 2, c.y + c.height / 2]; })()"
    )
    opened.mouse("mouseMoved", x, y)
    hovered = opened.eval(
        "Array.from(document.querySelectorAll('#rg-graph .verbs.hover text')).map(t => t.textContent)"
    )
    assert edge["relationship"] in hovered
    theirs = {e["relationship"] for e in graph["edges"].values() if node in (e["source"], e["target"])}
    assert set(hovered) <= theirs
    opened.mouse("mouseMoved", 2, 2)
    assert opened.eval("document.querySelectorAll('#rg-graph .verbs.hover text').length") == 0


def test_show_all_and_expanding_a_node_keep_labels_apart(
    opened: Browser, graph: dict[str, Any], tmp_path: Path
) -> None:
    before = set(opened.eval(VISIBLE))
    badge = opened.eval(
        "Array.from(document.querySelectorAll('#rg-graph g.node')).filter(g => "
        "g.querySelector('.more').getBoundingClientRect().width > 0).map(g => g.getAttribute('data-id'))[0]"
    )
    assert badge, "some node in the default view has hidden neighbours"
    opened.eval(
        f"document.querySelector('#rg-graph g.node[data-id=\"{badge}\"]').dispatchEvent(new MouseEvent('dblclick'))"
    )
    after = set(opened.eval(VISIBLE))
    theirs = {
        e["target"] if e["source"] == badge else e["source"]
        for e in graph["edges"].values()
        if badge in (e["source"], e["target"])
    }
    assert before < after and theirs <= after
    assert_labels_apart(opened)
    opened.eval("document.getElementById('rg-all').click()")
    assert len(opened.eval(VISIBLE)) == 300
    boxes = assert_labels_apart(opened)
    took = float(opened.eval("document.getElementById('rg-graph').dataset.layoutMs"))
    shot = opened.screenshot(tmp_path / "view-300-all.png")
    print(f"\nshow all: {len(boxes)} of 300 labelled, laid out in {took:.0f} ms; screenshot {shot}")
    assert len(boxes) >= 150
    assert took < 10_000
    opened.eval("document.getElementById('rg-default').click()")
    assert set(opened.eval(VISIBLE)) == before


def test_details_show_the_kind_and_facts(browser: Browser, page: Path, graph: dict[str, Any]) -> None:
    file_id = next(nid for nid, n in graph["nodes"].items() if n["kind"] == "file" and nid not in graph["focus"])
    browser.open(page.as_uri() + f"#node={file_id}")
    rows = browser.eval("Array.from(document.querySelectorAll('#rg-details tr')).map(r => r.textContent)")
    assert "kindfile" in rows and "domaintechnical" in rows
    facts = graph["nodes"][file_id]["facts"]
    assert f"path{facts['path']}" in rows and f"edits{facts['edits']}" in rows
    assert browser.eval(
        f"document.querySelector('#rg-graph g.node[data-id=\"{file_id}\"]').getBoundingClientRect().width > 0"
    )
    # a new deep link in the same page opens that node too
    task_id = next(nid for nid, n in graph["nodes"].items() if n["kind"] == "task" and nid not in graph["focus"])
    browser.eval(f"location.hash = 'node={task_id}'")
    browser.wait_for(f"document.querySelector('#rg-details h2').textContent === {graph['nodes'][task_id]['label']!r}")
    rows = browser.eval("Array.from(document.querySelectorAll('#rg-details tr')).map(r => r.textContent)")
    assert "kindtask" in rows and f"status{graph['nodes'][task_id]['facts']['status']}" in rows


def test_label_placement_never_overlaps_on_random_drawings(browser: Browser, tmp_path: Path) -> None:
    """RGLayout.placeLabels on 200 seeded random drawings, dense ones included: no two
    placed label boxes come within the gap asked for, and the first in priority always gets
    a label (nothing is in its way)."""
    page = tmp_path / "layout.html"
    page.write_text(f"<!DOCTYPE html><script>{script_text().split('var RGDetails')[0]}</script>", encoding="utf-8")
    browser.call("Page.navigate", {"url": page.as_uri()})
    browser.wait_for("typeof RGLayout === 'object'")
    result = browser.eval(
        """(() => {
  let seed = 14, bad = [], firstMissed = 0;
  const rnd = () => (seed = RGLayout.hash('s' + seed)) / 4294967296;
  for (let trial = 0; trial < 200; trial++) {
    const n = 5 + Math.floor(rnd() * 120), side = 80 + rnd() * 900, pad = 2 + rnd() * 4;
    const items = [];
    for (let i = 0; i < n; i++) {
      const h = 10 + rnd() * 4;
      items.push({x: rnd() * side, y: rnd() * side, r: 4 + rnd() * 18,
                  options: [{w: 20 + rnd() * 200, h: h}, {w: 10 + rnd() * 60, h: h}]});
    }
    const order = items.map((_, i) => i);
    const placed = RGLayout.placeLabels(items, order, pad).placed.filter(p => p.option >= 0);
    if (RGLayout.placeLabels(items, order, pad).placed[0].option < 0) firstMissed++;
    for (let i = 0; i < placed.length; i++)
      for (let j = i + 1; j < placed.length; j++)
        if (RGLayout.overlaps(placed[i], placed[j], pad - 1e-6)) bad.push([trial, i, j]);
  }
  return {bad: bad.slice(0, 5), firstMissed: firstMissed};
})()"""
    )
    assert result == {"bad": [], "firstMissed": 0}
