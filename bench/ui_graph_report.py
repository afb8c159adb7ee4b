"""The "Web UI" section of docs/benchmarks.md from bench.ui_graph's results (one dict per size, see run_size)."""

from __future__ import annotations


def _kb(n: int) -> str:
    return f"{n / 1024:,.0f} KB"


def _ms(value: float) -> str:
    return "–" if value < 0 else f"{value:.0f} ms"


def _rows(results: list[dict]) -> list[tuple[str, dict, dict]]:
    """(row label, size result, one tree's summary) for every size and code tree."""
    return [(f"{r['size']:,}" + ("" if len(r["trees"]) == 1 else f" {name}"), r, t)
            for r in results for name, t in r["trees"].items()]


def report(results: list[dict], machine_md: str, load: str) -> str:
    names = list(results[0]["trees"])
    trees = "" if len(names) == 1 else (
        f" Each size was served by {len(names)} code trees ({', '.join(names)}) from the same seeded home, each by"
        " its own server, their visits alternated run by run.")
    lines = [
        "Time to a drawn graph (navigation start to the first rendered frame after the layout) and page weight,",
        "measured by `python -m bench.ui_graph` in headless Debian Chromium (`/usr/bin/chromium`, software",
        "rendering, no GPU) against `ormah serve` (gunicorn, static files from Django). Median of "
        f"{results[0]['runs']} runs.{trees}",
        "First visit = fresh browser context with an empty position cache (the layout runs: fcose in the page, which",
        "sends the positions to the server, or, above 1,000 memories in the core, the server's own layout, sent with",
        "the data and kept; positions = the server's time for them, from the answer's Server-Timing header); later",
        "visit = fresh browser context whose memories all have cached positions (no layout);",
        "ready = the graph usable with its edges (a big graph drawn from cached positions adds them after the first",
        "frame; below 1,500 memories, or with positions missing, ready is the first frame);",
        "reload = the later visit reloaded. CPU = user + system time of the Chromium processes (browser) and of",
        "the gunicorn tree (server) during the visit; main-thread CPU = the renderers' main threads only (the",
        "page's JavaScript, style and painting), the number least moved by other load on the machine. Data = from",
        "graph.js starting to the data in hand (the request itself starts earlier, from graph-data.js). Floor =",
        "navigation to the load event of the stats page in the same browser and server (no graph), same run.",
        f"Load average while it ran: {load}.",
        "",
        "| Memories | Drawn nodes / edges | First visit: drawn | ready | data | positions | layout | first frame "
        "| browser CPU | Later visit: drawn | ready | layout | browser CPU | main-thread CPU | Reload: drawn | Floor "
        "| First / later ÷ floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r, t in _rows(results):
        c, k = t["cold"], t["cached"]
        lines.append(
            f"| {label} | {t['nodes']:,} / {t['edges']:,} | {c['drawn_ms'] / 1000:.2f} s | "
            f"{c['ready_ms'] / 1000:.2f} s | {c['fetch_ms']:.0f} ms | {_ms(c['positions_ms'])} | "
            f"{c['layout_ms']:.0f} ms | {c['render_ms']:.0f} ms | "
            f"{c['browser_cpu_ms'] / 1000:.2f} s | {k['drawn_ms'] / 1000:.2f} s | {k['ready_ms'] / 1000:.2f} s | "
            f"{k['layout_ms']:.0f} ms | "
            f"{k['browser_cpu_ms'] / 1000:.2f} s | {k['main_cpu_ms'] / 1000:.2f} s | "
            f"{t['warm']['drawn_ms'] / 1000:.2f} s | {t['floor_ms']:.0f} ms | "
            f"{c['drawn_ms'] / t['floor_ms']:.1f} / {k['drawn_ms'] / t['floor_ms']:.1f} |")
    w = results[0]["weight"]
    split = lambda v: (  # noqa: E731
        f"start {v['start_ms']:.0f}, data {v['fetch_ms']:.0f}, init {v['init_ms']:.0f}, layout "
        f"{v['layout_ms']:.0f}, fit {v['fit_ms']:.0f}, first frame {v['render_ms']:.0f}")
    lines += [
        "",
        "Where a later visit's time goes (median ms; start = navigation to graph.js running): "
        + "; ".join(f"{label}: {split(t['cached'])}" for label, _, t in _rows(results)) + ".",
        "",
        "Where a first visit's time goes (median ms): "
        + "; ".join(f"{label}: {split(t['cold'])}" for label, _, t in _rows(results)) + ". Layout of the first"
        " visits: " + "; ".join(f"{label}: {', '.join(sorted(set(t['first_layouts'])))}" for label, _, t in _rows(results))
        + ". Server CPU per visit: "
        + "; ".join(f"{label}: {t['cold']['server_cpu_ms']:.0f} ms first, {t['cached']['server_cpu_ms']:.0f} ms later"
                    for label, _, t in _rows(results)) + ". Drag frames/s after the later visit (first drag / then): "
        + "; ".join(f"{label}: {t['fps_first']:.0f} / {t['fps']:.0f}" for label, _, t in _rows(results)) + ".",
        "",
        "Graph JSON (gzip / raw): " + "; ".join(
            f"{r['size']:,}: {_kb(r['weight']['graph_json'])} / {_kb(r['weight']['graph_json_decoded'])}"
            for r in results) + f" (as served by {names[0]}).",
        "",
        "Page weight of the graph page, cold (bytes transferred):",
        "",
        "| Part | Size |",
        "|---|---:|",
        f"| HTML | {_kb(w['html'])} |",
        f"| Vendored JS (htmx, Cytoscape, layout-base, cose-base, fcose) | {_kb(w['vendor_js'])} |",
        f"| Ormah JS (app.js, graph-data.js, graph.js) | {_kb(w['ui_js'])} |",
        f"| CSS | {_kb(w['css'])} |",
        f"| Total without the graph data | {_kb(w['total'] - w['graph_json'])} |",
        "",
        "Server side (in the seeding process): `graph_export()` took "
        + ", ".join(f"{r['seed']['export_ms']:.0f} ms for {r['size']:,}" for r in results) + ".",
    ]
    return "\n".join(lines)
