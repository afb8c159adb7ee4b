"""Presentation helpers for the UI views: escaped markdown and server-rendered SVG chart geometry."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

# html=False: raw HTML in a memory is shown as text, never passed through; markdown-it's validateLink refuses
# javascript:, vbscript:, file: and data: links.
_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _inside_link(tokens, idx, env) -> bool:
    """Whether the inline token at `idx` stands between a link's open and close (a badge: [![build](b.svg)](ci)).
    A list's link depths are counted once and kept in env: counting from its start for each image made a memory of
    8,000 images take 5.7 s of CPU per page (quadratic; session 23, review11)."""
    cached = env.setdefault("link_depths", {}).get(id(tokens))
    if cached is None or cached[0] is not tokens:
        depths, depth = [], 0
        for token in tokens:
            depths.append(depth)
            depth += {"link_open": 1, "link_close": -1}.get(token.type, 0)
        cached = env["link_depths"][id(tokens)] = (tokens, depths)
    return cached[1][idx] > 0


def _image_as_link(renderer, tokens, idx, options, env) -> str:
    """An image is a link named by its alt text: a screen never fetches what a memory names (a README's badges were
    broken images, CSP errors and same-site requests for relative paths in the inbox). A data: image keeps its name
    (its data is never shown); an image inside a link is that link's name (an <a> in an <a> is not HTML: the browser
    would close the outer link there)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    data = src.lower().startswith("data:")
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    name = escapeHtml("image: " + (alt or ("inline data" if data else src)))
    if not src or data or _inside_link(tokens, idx, env):
        return f'<span class="image-link">{name}</span>'
    return f'<a href="{escapeHtml(src)}" class="image-link">{name}</a>'


_MD.add_render_rule("image", _image_as_link)


def markdown_html(text: str) -> SafeString:
    """Memory content as HTML: markdown rendered with raw HTML escaped (safe to insert into a page)."""
    return mark_safe(_MD.render(text or ""))  # noqa: S308 - markdown-it escapes all text and refuses raw HTML


# ---------------------------------------------------------------------------
# SVG charts (geometry computed here, so templates only place shapes)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    x: float
    y: float
    width: float
    height: float
    label_x: float
    label_y: float
    value_x: float
    value_y: float


@dataclass(frozen=True)
class BarChart:
    title: str
    width: int
    height: int
    bars: list[Bar]
    horizontal: bool


def bar_chart(title: str, items: list[tuple[str, int]], *, horizontal: bool = True, width: int = 420,
              row: int = 24, height: int = 180, label_width: int = 110) -> BarChart:
    """Bars for (label, value) pairs: horizontal rows with the label on the left, or vertical columns."""
    top = max([v for _, v in items] + [1])
    bars = []
    if horizontal:
        span = width - label_width - 48
        for i, (label, value) in enumerate(items):
            w = span * value / top
            y = i * row + 4
            bars.append(Bar(label=label, value=value, x=label_width, y=y, width=round(w, 1), height=row - 8,
                            label_x=label_width - 8, label_y=y + (row - 8) / 2 + 4, value_x=round(label_width + w + 6, 1),
                            value_y=y + (row - 8) / 2 + 4))
        return BarChart(title=title, width=width, height=max(row, len(items) * row), bars=bars, horizontal=True)
    n = max(len(items), 1)
    plot = height - 36
    slot = width / n
    for i, (label, value) in enumerate(items):
        h = plot * value / top
        x = i * slot + slot * 0.12
        bars.append(Bar(label=label, value=value, x=round(x, 1), y=round(plot - h + 14, 1), width=round(slot * 0.76, 1),
                        height=round(h, 1), label_x=round(x + slot * 0.38, 1), label_y=height - 6,
                        value_x=round(x + slot * 0.38, 1), value_y=round(plot - h + 10, 1)))
    return BarChart(title=title, width=width, height=height, bars=bars, horizontal=False)


@dataclass(frozen=True)
class LineChart:
    title: str
    width: int
    height: int
    points: str  # SVG polyline points
    area: str  # SVG path of the filled area
    first_label: str
    last_label: str
    max_value: int
    markers: list[tuple[float, float, str, int]]  # x, y, label, value (for the accessible table and tooltips)


def line_chart(title: str, items: list[tuple[str, int]], *, width: int = 420, height: int = 180) -> LineChart:
    """A cumulative line (e.g. memories over time) with its filled area."""
    pad_x, pad_top, pad_bottom = 8, 16, 24
    top = max([v for _, v in items] + [1])
    n = len(items)
    plot_w, plot_h = width - 2 * pad_x, height - pad_top - pad_bottom
    markers = []
    for i, (label, value) in enumerate(items):
        x = pad_x + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)
        y = pad_top + plot_h * (1 - value / top)
        markers.append((round(x, 1), round(y, 1), label, value))
    points = " ".join(f"{x},{y}" for x, y, _, _ in markers)
    base = pad_top + plot_h
    area = (f"M{markers[0][0]},{base} " + " ".join(f"L{x},{y}" for x, y, _, _ in markers)
            + f" L{markers[-1][0]},{base} Z") if markers else ""
    return LineChart(title=title, width=width, height=height, points=points, area=area,
                     first_label=items[0][0] if items else "", last_label=items[-1][0] if items else "",
                     max_value=top if items else 0, markers=markers)
