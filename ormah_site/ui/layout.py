"""The first layout of a big graph, computed on the server, so that a first visit draws as a later one does.

Above LAYOUT_ABOVE memories in its core (the components of CORE_MIN or more), static/ui/graph.js gives the core to
fcose with quality "draft": a spectral layout only (graph distances from sampled pivots, projected on two axes),
no force-directed refinement. That took 0.8-1.0 s of the page's main thread at 5,000 memories; the same kind of
layout here costs tens of milliseconds. It follows graph.js's runLayout: each core component gets a pivot-MDS
layout (Brandes & Pich, the method behind fcose's spectral step, with fcose's 25 pivots and 75 px per hop), the
components are packed in rows filling a disc around the largest, the self node sits at (0, 0), and the small
components go on rings around the core, the most important on the innermost ring (graph.js placeAroundCore).
Deterministic: no randomness.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

LAYOUT_ABOVE = 1000  # static/ui/graph.js DRAFT_ABOVE: above this, fcose would run its spectral draft only
CORE_MIN = 4         # static/ui/graph.js CORE_MIN: smaller components go on rings around the core
PIVOTS = 25          # fcose's sampleSize
HOP = 75.0           # fcose's nodeSeparation: pixels per edge of graph distance
RING_GAP = 64.0      # graph.js placeAroundCore
COMPONENT_GAP = 90.0


@dataclass(frozen=True)
class GraphParts:
    """A graph split as graph.js splits it for its layout: the core components and the small ones."""

    ids: list[str]
    adjacency: list[list[int]]
    core: list[list[int]]    # components laid out by the spectral step, largest first
    small: list[list[int]]   # components placed on rings, in ring order
    self_index: int | None

    @property
    def core_size(self) -> int:
        return sum(len(c) for c in self.core)


def graph_parts(*, nodes: list[dict], edges: list[list]) -> GraphParts:
    """The components of the exported graph (memory.graph GraphData's compact nodes and edges)."""
    index = {n["id"]: i for i, n in enumerate(nodes)}
    adjacency: list[list[int]] = [[] for _ in nodes]
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for e in edges:
        a, b = index.get(e[0]), index.get(e[1])
        if a is None or b is None or a == b:
            continue
        adjacency[a].append(b)
        adjacency[b].append(a)
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(nodes)):
        groups[find(i)].append(i)
    self_index = next((i for i, n in enumerate(nodes) if n.get("self")), None)
    core, small = [], []
    for group in groups.values():
        has_self = self_index is not None and self_index in group
        (core if len(group) >= CORE_MIN or (has_self and len(group) > 1) else small).append(group)
    core.sort(key=len, reverse=True)
    small.sort(key=lambda g: (-int(bool(nodes[g[0]].get("self"))), -float(nodes[g[0]].get("imp") or 0)))
    return GraphParts(ids=list(index), adjacency=adjacency, core=core, small=small, self_index=self_index)


# ---------------------------------------------------------------------------
# The core: pivot MDS per component, components packed
# ---------------------------------------------------------------------------

def _bfs(adjacency: list[list[int]], start: int) -> list[int]:
    dist = [-1] * len(adjacency)
    dist[start] = 0
    frontier, d = [start], 0
    while frontier:
        d += 1
        nxt = []
        for u in frontier:
            for v in adjacency[u]:
                if dist[v] < 0:
                    dist[v] = d
                    nxt.append(v)
        frontier = nxt
    return dist


def _spread(xy: np.ndarray) -> np.ndarray:
    """Memories the projection put on one spot (leaves of one hub have the same distances) go on a small circle."""
    spots: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (x, y) in enumerate(np.round(xy / 8.0).astype(int).tolist()):
        spots[(x, y)].append(i)
    for members in spots.values():
        if len(members) < 2:
            continue
        r = max(22.0, 30.0 * len(members) / (2 * math.pi))
        centre = xy[members].mean(axis=0)
        for j, i in enumerate(members):
            t = 2 * math.pi * j / len(members)
            xy[i] = centre + (r * math.cos(t), r * math.sin(t))
    return xy


def _component(adjacency: list[list[int]], members: list[int]) -> np.ndarray:
    """Pivot MDS of one connected component: positions (len(members) x 2), centred on (0, 0)."""
    m = len(members)
    if m <= 2:
        return np.array([[0.0, 0.0], [HOP, 0.0]][:m])
    local = {g: i for i, g in enumerate(members)}
    adj = [[local[v] for v in adjacency[g]] for g in members]
    start = max(range(m), key=lambda i: (len(adj[i]), -i))  # the best connected memory first
    rows, nearest = [], None
    for _ in range(min(PIVOTS, m)):  # each next pivot is the memory farthest from those chosen (fcose's greedy)
        row = np.array(_bfs(adj, start), dtype=np.float64)
        rows.append(row)
        nearest = row if nearest is None else np.minimum(nearest, row)
        start = int(np.argmax(nearest))
        if nearest.max() == 0:
            break
    dist = np.vstack(rows) * HOP
    sq = dist ** 2
    c = -0.5 * (sq - sq.mean(axis=1, keepdims=True) - sq.mean(axis=0, keepdims=True) + sq.mean())
    values, vectors = np.linalg.eigh(c @ c.T)
    xy = c.T @ vectors[:, np.argsort(values)[::-1][:2]]
    if xy.shape[1] < 2:
        xy = np.hstack([xy, np.zeros((m, 1))])
    # scale so that the distances to the pivots fit the graph distances best (least squares)
    pivots = [int(np.argmin(r)) for r in rows]
    seen = np.sqrt(((xy[None, :, :] - xy[pivots][:, None, :]) ** 2).sum(axis=2))
    norm = float((seen * seen).sum())
    xy *= float((seen * dist).sum()) / norm if norm > 0 else 1.0
    return _spread(xy - xy.mean(axis=0))


def _row(queue: list[int], sizes: list[tuple[float, float]], width: float) -> list[int]:
    """Components for one row, first fit in queue order (at least one)."""
    row, used = [], 0.0
    for i in queue:
        if not row or used + sizes[i][0] <= width:
            row.append(i)
            used += sizes[i][0]
    return row


def _rows(sizes: list[tuple[float, float]], radius: float) -> tuple[list[tuple[float, list[int]]], bool]:
    """Rows (top y, members) filling a disc of this radius from the middle out; and whether they stayed inside."""
    rows: list[tuple[float, list[int]]] = []
    queue, top, bottom, inside = list(range(len(sizes))), 0.0, 0.0, True
    while queue:
        height = sizes[queue[0]][1]
        if not rows:
            y0, far = -height / 2, height / 2
        else:
            y0 = top - height if len(rows) % 2 else bottom  # above, then below, in turn
            far = max(abs(y0), abs(y0 + height))
        inside = inside and far <= radius
        row = _row(queue, sizes, 2 * math.sqrt(max(radius * radius - far * far, 0.0)))
        height = max(sizes[i][1] for i in row)
        if rows and len(rows) % 2:
            y0 = top - height
        rows.append((y0, row))
        top, bottom = min(top, y0), max(bottom, y0 + height)
        taken = set(row)
        queue = [i for i in queue if i not in taken]
    return rows, inside


def _pack(blocks: list[np.ndarray]) -> list[np.ndarray]:
    """Components in rows filling a disc: the largest in the middle row, the next rows above and below in turn,
    each as wide as the disc there. The core comes out round, as fcose draws it, for the rings to go around."""
    centred, sizes = [], []
    for b in blocks:
        lo, hi = b.min(axis=0), b.max(axis=0)
        centred.append(b - (lo + hi) / 2)
        sizes.append((float(hi[0] - lo[0]) + COMPONENT_GAP, float(hi[1] - lo[1]) + COMPONENT_GAP))
    radius = max(math.sqrt(sum(w * h for w, h in sizes) / math.pi), math.hypot(*sizes[0]) / 2)
    for _ in range(12):  # a wider disc until the rows fit in it
        rows, inside = _rows(sizes, radius)
        if inside:
            break
        radius *= 1.1
    out: list[np.ndarray] = [np.empty((0, 2))] * len(blocks)
    for y0, row in rows:
        height = max(sizes[i][1] for i in row)
        x = -sum(sizes[i][0] for i in row) / 2
        for i in row:
            out[i] = centred[i] + (x + sizes[i][0] / 2, y0 + height / 2)
            x += sizes[i][0]
    return out


# ---------------------------------------------------------------------------
# The whole graph
# ---------------------------------------------------------------------------

def graph_layout(parts: GraphParts) -> dict[str, list[float]]:
    """Where to draw every memory: id -> [x, y] (pixels at zoom 1, rounded to 0.1)."""
    xy = np.zeros((len(parts.ids), 2))
    core = [m for c in parts.core for m in c]
    if core:
        for members, block in zip(parts.core, _pack([_component(parts.adjacency, c) for c in parts.core])):
            xy[members] = block
        if parts.self_index is not None and parts.self_index in set(core):
            xy[core] -= xy[parts.self_index]  # graph.js fixes the self node at (0, 0)
        lo, hi = xy[core].min(axis=0) - 16, xy[core].max(axis=0) + 16  # ~ half a node
    small = parts.small
    self_alone = bool(small) and parts.self_index is not None and small[0] == [parts.self_index]
    if self_alone:  # a self node without connections sits in the centre, or above the core when there is one
        xy[parts.self_index] = ((lo[0] + hi[0]) / 2, lo[1] - 80) if core else (0.0, 0.0)
        small = small[1:]
    cx, cy = ((lo + hi) / 2).tolist() if core else (0.0, 0.0)
    # the innermost ring clears every core memory (graph.js uses half the core's box: fcose's core is round)
    reach = float(np.hypot(xy[core, 0] - cx, xy[core, 1] - cy).max()) + 16 if core else 0.0
    r = (reach + 90) if core else (RING_GAP * 1.5 if self_alone else 0.0)
    slots, k = (1 if r == 0 else int(2 * math.pi * r // RING_GAP)), 0
    placed, at = [], []
    for group in small:
        if k >= slots:
            r += RING_GAP
            slots, k = int(2 * math.pi * r // RING_GAP), 0
        a = 2 * math.pi * k / slots - math.pi / 2
        x, y = cx + r * math.cos(a), cy + r * math.sin(a)
        k += 1
        off = 0.0 if len(group) == 1 else 18.0
        for j, i in enumerate(group):
            t = 2 * math.pi * j / len(group)
            placed.append(i)
            at.append((x + off * math.cos(t), y + off * math.sin(t)))
    if placed:
        xy[placed] = at
    return dict(zip(parts.ids, np.round(xy, 1).tolist()))
