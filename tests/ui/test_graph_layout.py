"""The server's first layout of a big graph (ormah_site/ui/layout.py) and when the positions cache uses it."""

from __future__ import annotations

import json
import math
from pathlib import Path

from memory.services import edge_create, self_ensure
from ormah_site.ui.layout import HOP, LAYOUT_ABOVE, graph_layout, graph_parts
from ormah_site.ui.positions import positions_for_graph, positions_load, positions_save


def _graph() -> tuple[list[dict], list[list]]:
    """A path of 30, a star of 12 around the self node, a triangle and 5 loose memories."""
    nodes = [{"id": "me", "self": 1, "imp": 1.0}]
    nodes += [{"id": f"p{i}", "imp": 0.5} for i in range(30)]
    nodes += [{"id": f"s{i}", "imp": 0.4} for i in range(12)]
    nodes += [{"id": f"t{i}", "imp": 0.45} for i in range(3)]
    nodes += [{"id": f"l{i}", "imp": 0.1 * i} for i in range(5)]
    edges = [[f"p{i}", f"p{i + 1}", "related_to", 0.7] for i in range(29)]
    edges += [["me", f"s{i}", "defines", 1.0] for i in range(12)]
    edges += [["t0", "t1", "supports", 0.5], ["t1", "t2", "supports", 0.5], ["t2", "t0", "supports", 0.5]]
    return nodes, edges


def _dist(a: list[float], b: list[float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def test_the_core_is_what_the_browser_would_give_fcose():
    parts = graph_parts(nodes=_graph()[0], edges=_graph()[1])
    assert parts.core_size == 43  # the path and the self's star; the triangle is below CORE_MIN
    assert [len(c) for c in parts.small] == [3, 1, 1, 1, 1, 1]


def test_every_memory_gets_its_own_finite_position_and_the_same_one_each_time():
    nodes, edges = _graph()
    pos = graph_layout(graph_parts(nodes=nodes, edges=edges))
    assert set(pos) == {n["id"] for n in nodes}
    assert all(math.isfinite(v) for p in pos.values() for v in p)
    assert len({tuple(p) for p in pos.values()}) == len(nodes)
    assert graph_layout(graph_parts(nodes=nodes, edges=edges)) == pos


def test_the_self_node_is_at_the_origin_and_a_path_is_drawn_at_its_length():
    pos = graph_layout(graph_parts(nodes=_graph()[0], edges=_graph()[1]))
    assert pos["me"] == [0.0, 0.0]
    assert 0.8 * 29 * HOP < _dist(pos["p0"], pos["p29"]) < 1.2 * 29 * HOP
    assert all(_dist(pos[f"p{i}"], pos[f"p{i + 1}"]) < 2 * HOP for i in range(29))


def test_the_small_components_go_around_the_core():
    pos = graph_layout(graph_parts(nodes=_graph()[0], edges=_graph()[1]))
    core = [p for k, p in pos.items() if k[0] in "mps"]
    xs, ys = [p[0] for p in core], [p[1] for p in core]
    for k in ("t0", "t1", "t2", "l0", "l4"):
        x, y = pos[k]
        assert not (min(xs) <= x <= max(xs) and min(ys) <= y <= max(ys)), k


def test_a_small_core_is_left_to_the_browser(home):
    nodes, edges = _graph()
    placed = positions_for_graph(nodes=nodes, edges=edges)
    assert (placed.computed, placed.pos) == (False, {})
    assert positions_load() == {}


def test_a_big_core_without_positions_is_laid_out_once_and_cached(home, monkeypatch):
    monkeypatch.setattr("ormah_site.ui.positions.LAYOUT_ABOVE", 40)
    nodes, edges = _graph()
    first = positions_for_graph(nodes=nodes, edges=edges)
    assert first.computed is True and len(first.pos) == 51
    assert positions_load() == first.pos
    again = positions_for_graph(nodes=nodes, edges=edges)
    assert (again.computed, again.pos) == (False, first.pos)


def test_positions_kept_for_most_memories_are_not_laid_out_again(home, monkeypatch):
    monkeypatch.setattr("ormah_site.ui.positions.LAYOUT_ABOVE", 40)
    nodes, edges = _graph()
    kept = {n["id"]: [1.0, 2.0] for n in nodes[:31]}  # 31 of 51: above the browser's 60 %
    positions_save(positions=kept)
    placed = positions_for_graph(nodes=nodes, edges=edges)
    assert (placed.computed, placed.pos) == (False, kept)


def test_the_graph_data_carries_the_server_layout_on_the_first_visit_only(ui, mem, monkeypatch):
    monkeypatch.setattr("ormah_site.ui.positions.LAYOUT_ABOVE", 3)
    me = self_ensure()
    chain = [mem(f"Step {i} of the release checklist: tag, build, sign, upload", auto_link=False) for i in range(5)]
    for a, b in zip(chain, chain[1:]):
        edge_create(source_ref=a.id, target_ref=b.id, edge="related_to", weight=0.6)
    response = ui.get("/graph/data/")
    data = json.loads(response.content)
    assert data["layout"] == "server"
    assert set(data["pos"]) == {me.id, *(n.id for n in chain)}
    assert response.headers["Server-Timing"].startswith("positions;dur=")
    again = json.loads(ui.get("/graph/data/").content)
    assert "layout" not in again and again["pos"] == data["pos"]


def test_layout_above_matches_the_browsers_draft_threshold():
    script = Path(__file__).resolve().parents[2] / "static" / "ui" / "graph.js"
    assert f"var DRAFT_ABOVE = {LAYOUT_ABOVE};" in script.read_text(encoding="utf-8")
