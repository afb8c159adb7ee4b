"""Web UI benchmark: time to a drawn graph and page weight, in headless Debian Chromium against `ormah serve`.

    python -m bench.ui_graph [--sizes 1000,5000,10000] [--runs 5] [--baseline main] [--write]

For each size N, a child process makes a fresh temporary ORMAH_HOME: N generated memories (bench/_common.py,
with their connections) written as markdown files and indexed by `memory.index.sync` (vectors from the
bench-local cache when present, see bench/spine.py), the self node, then `ormah init --quiet` (the UI account).
`manage.py serve --no-cluster --no-watch` then serves it with gunicorn exactly as in production (static files
included), and Playwright drives /usr/bin/chromium (tech notes §5):

- drawn: navigation start to the `ormah:graph-drawn` performance mark, which graph.js sets after the layout
  has run (fcose in the page, or above 1,000 memories in the core the server's, ormah_site/ui/layout.py) and
  Cytoscape has rendered the first frame; ready: to `#graph[data-state=ready]` (a big graph drawn
  from cached positions adds its edges after the first frame; otherwise the same frame). "cold" is a fresh
  browser context (empty HTTP cache), "warm" a reload in the same context. The split comes from `window.ormahGraphTimings` (data fetch and parse,
  layout) measured in the page; the server's time for the positions (read from the cache, or laid out) from the
  data answer's `Server-Timing` header (-1 for a tree that does not send it).
- weight: bytes transferred for the graph page (Resource Timing `transferSize`), by kind, and the decoded size
  of the graph JSON (served gzipped).
- frames: frames painted per second while the mouse drags the graph for 2 seconds (requestAnimationFrame count),
  first right after the graph is drawn (Cytoscape still fills its node texture caches), then a second drag.
  Headless Chromium without a GPU renders on the CPU, so a laptop with a GPU does better.

`--baseline REF` serves the code of a git ref too (exported with `git archive`, its own server on the same seeded
home) and alternates the two trees' visits run by run: before and after in the same run, at the same load.
`--write` replaces its marked block in the "Web UI" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import DEFAULT_CACHE_DIR, REPO, corpus, machine, write_block
from bench.ui_graph_report import report

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1440, "height": 900}
CORPUS_SEED = 1
TIMINGS = ("drawn_ms", "ready_ms", "start_ms", "fetch_ms", "init_ms", "layout_ms", "fit_ms", "render_ms",
           "browser_cpu_ms", "main_cpu_ms", "server_cpu_ms", "positions_ms")
TICKS = os.sysconf("SC_CLK_TCK")
SITE_DIR = ".bench-site"  # in an exported baseline tree (see _export_tree)


def _cpu_ms(root: int, *, exclude: int | None = None) -> float:
    """CPU time (user + system, ms) of a process and all its descendants, leaving out the tree of `exclude`."""
    parent, cpu = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) * 1000 / TICKS
    def inside(pid: int) -> bool:
        while pid > 1:
            if pid == exclude:
                return False
            if pid == root:
                return True
            pid = parent.get(pid, 0)
        return False
    return sum(ms for pid, ms in cpu.items() if inside(pid))


def _renderer_main_ms() -> float:
    """CPU time (ms) of the main threads of every Chromium renderer: where the page's JavaScript, style and
    painting run. On a shared machine the steadiest of these numbers (wall time waits for a core, this does not)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"--type=renderer" not in (entry / "cmdline").read_bytes():
                continue
            fields = (entry / "task" / entry.name / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) * 1000 / TICKS
    return total


# ---------------------------------------------------------------------------
# Child: seed a home
# ---------------------------------------------------------------------------

def child_seed(home: Path, size: int, cache_dir: Path) -> dict:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    from bench.spine import cache_save, cache_seed, write_files
    from memory import index, runtime
    from memory.services import self_ensure

    call_command("migrate", verbosity=0, interactive=False)
    store, emb = runtime.store(), runtime.embedder()
    _, nodes = write_files(store, corpus(size, seed=CORPUS_SEED))
    seeded = cache_seed(cache_dir, nodes, emb.model_id)
    start = time.perf_counter()
    report = index.sync(store, embedder=emb)
    sync_s = time.perf_counter() - start
    cache_save(cache_dir, nodes, emb.model_id)
    self_ensure(name="Bench")
    call_command("init", "--quiet")
    from memory.graph import graph_export

    start = time.perf_counter()
    data = graph_export()
    export_s = time.perf_counter() - start
    return {"indexed": report.indexed, "cache_seeded": seeded, "sync_s": round(sync_s, 2),
            "export_ms": round(export_s * 1000, 1), "graph_nodes": len(data.nodes), "graph_edges": len(data.edges),
            "truncated": data.truncated}


# ---------------------------------------------------------------------------
# Parent: serve, drive Chromium
# ---------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(home: Path, port: int, tree: Path = REPO) -> subprocess.Popen:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING"}
    if (tree / SITE_DIR).is_dir():
        env["PYTHONPATH"] = str(tree / SITE_DIR)
    proc = subprocess.Popen([sys.executable, str(tree / "manage.py"), "serve", "--port", str(port), "--no-cluster",
                             "--no-watch"], env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    raise RuntimeError("ormah serve did not start")


def _sign_in(context, base: str, password: str) -> None:
    page = context.new_page()
    page.goto(base + "/login/")
    page.fill("#id_username", "ormah")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("#graph[data-state=ready]", timeout=180_000)
    page.close()


def _measure(page, base: str, server: int, *, reload: bool = False) -> dict:
    browser0, server0, main0 = _cpu_ms(os.getpid(), exclude=server), _cpu_ms(server), _renderer_main_ms()
    if reload:
        page.reload()
    else:
        page.goto(base + "/")
    page.wait_for_selector("#graph[data-state=ready]", timeout=180_000)
    if page.get_attribute("#graph", "data-layout") == "computed":  # the positions reach the server cache
        page.wait_for_function("document.getElementById('graph').dataset.positionsSaved", timeout=60_000)
    cpu = {"browser_cpu_ms": round(_cpu_ms(os.getpid(), exclude=server) - browser0),
           "main_cpu_ms": round(_renderer_main_ms() - main0),
           "server_cpu_ms": round(_cpu_ms(server) - server0), "layout": page.get_attribute("#graph", "data-layout")}
    return cpu | page.evaluate("""() => {
        const drawn = performance.getEntriesByName('ormah:graph-drawn')[0].startTime;
        const t = window.ormahGraphTimings;
        const data = performance.getEntriesByType('resource')
            .filter(r => new URL(r.name).pathname === '/graph/data/').pop();
        const positions = ((data && data.serverTiming) || []).find(s => s.name === 'positions');
        return {drawn_ms: Math.round(drawn), ready_ms: t.ready_ms || Math.round(drawn), start_ms: t.start_ms,
                positions_ms: positions ? positions.duration : -1,
                fetch_ms: t.fetch_ms, init_ms: t.init_ms,
                layout_ms: t.layout_ms, fit_ms: t.fit_ms, render_ms: t.render_ms,
                nodes: window.ormahGraph.nodes().length, edges: window.ormahGraph.edges().length};
    }""")


def _weight(page) -> dict:
    return page.evaluate("""() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const out = {html: nav.transferSize, vendor_js: 0, ui_js: 0, css: 0, graph_json: 0, graph_json_decoded: 0,
                     other: 0};
        for (const r of performance.getEntriesByType('resource')) {
            const u = new URL(r.name).pathname;
            if (u.startsWith('/static/vendor/')) out.vendor_js += r.transferSize;
            else if (u.endsWith('.js')) out.ui_js += r.transferSize;
            else if (u.endsWith('.css')) out.css += r.transferSize;
            else if (u.startsWith('/graph/data/')) { out.graph_json += r.transferSize;
                                                     out.graph_json_decoded += r.decodedBodySize; }
            else out.other += r.transferSize;
        }
        out.total = out.html + out.vendor_js + out.ui_js + out.css + out.graph_json + out.other;
        return out;
    }""")


def _frames(page, seconds: float = 2.0) -> float:
    """Frames painted per second while the mouse drags the graph (a user pan: Cytoscape pans a texture).

    The drag starts at the empty point nearest the middle (no node within 40 px): pressed on a node it would drag
    that node, which redraws the whole graph every frame (about half the frames/s at 5,000 memories), and whether
    the middle holds a node is chance of the layout.
    """
    x, y = page.evaluate("""() => {
        const r = document.getElementById('graph').getBoundingClientRect();
        const at = window.ormahGraph.nodes().map(n => n.renderedPosition());
        const steps = [];
        for (let k = 0; k < 441; k++) steps.push([(k % 21 - 10) * 20, (Math.floor(k / 21) - 10) * 20]);
        steps.sort((a, b) => Math.hypot(a[0], a[1]) - Math.hypot(b[0], b[1]));
        for (const [dx, dy] of steps) {
            const x = r.width / 2 + dx, y = r.height / 2 + dy;
            if (at.every(p => Math.hypot(p.x - x, p.y - y) > 40)) return [r.x + x, r.y + y];
        }
        return [r.x + r.width / 2, r.y + r.height / 2];
    }""")
    page.evaluate("""() => { window.__frames = 0; window.__counting = true;
        (function tick() { if (!window.__counting) return; window.__frames += 1; requestAnimationFrame(tick); })(); }""")
    start = time.perf_counter()
    page.mouse.move(x, y)
    page.mouse.down()
    steps = 0
    while time.perf_counter() - start < seconds:
        steps += 1
        page.mouse.move(x + 120 * ((steps % 40) / 40), y + 60 * ((steps % 40) / 40))
    page.mouse.up()
    elapsed = time.perf_counter() - start
    frames = page.evaluate("() => { window.__counting = false; return window.__frames; }")
    return frames / elapsed


def _floor(page, base: str) -> float:
    """Navigation start to the load event of the stats page: the cost of any page of this server and browser."""
    page.goto(base + "/stats/")
    return page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")


def _export_tree(ref: str, dest: Path) -> Path:
    """The code of a git ref, as files (no .git): what `--baseline` serves beside the working tree.

    The venv's editable install would import a module the ref does not have from the working checkout (Django's
    admin autodiscovery found main's ormah_site/admin.py); a sitecustomize on the server's PYTHONPATH drops it.
    """
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / SITE_DIR).mkdir()
    (dest / SITE_DIR / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]\n")
    return dest


def _summary(cold: list[dict], cached: list[dict], warm: list[dict], frames: list, floors: list) -> dict:
    med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
    return {"cold": {k: med(cold, k) for k in TIMINGS}, "cached": {k: med(cached, k) for k in TIMINGS},
            "warm": {k: med(warm, k) for k in TIMINGS}, "layouts": [r["layout"] for r in cold + cached],
            "first_layouts": [r["layout"] for r in cold],
            "floor_ms": statistics.median(floors), "cold_max_ms": max(r["drawn_ms"] for r in cold),
            "nodes": cold[0]["nodes"], "edges": cold[0]["edges"],
            "fps_first": round(statistics.median(f[0] for f in frames), 1),
            "fps": round(statistics.median(f[1] for f in frames), 1)}


def run_size(size: int, runs: int, cache_dir: Path, trees: dict[str, Path]) -> dict:
    """Seed one home, serve it from each code tree (its own server), and alternate the trees' visits run by run."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ormah-bench-ui-") as tmp:
        home = Path(tmp) / "home"
        out = subprocess.run([sys.executable, "-m", "bench.ui_graph", "--child-seed", str(home), str(size),
                              str(cache_dir)], cwd=REPO, capture_output=True, text=True, check=True)
        seed = json.loads(out.stdout.strip().splitlines()[-1])
        password = (home / "ui_password").read_text().strip()
        servers = {}
        try:
            for name, tree in trees.items():
                port = _free_port()
                servers[name] = (_serve(home, port, tree), f"http://127.0.0.1:{port}")
            rows = {name: {"cold": [], "cached": [], "warm": [], "frames": [], "floors": []} for name in trees}
            weight = None
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                cookies = {}
                for name, (_, base) in servers.items():
                    # one unmeasured load per server warms it (imports, DB pages) the way a first visit would
                    warmup = browser.new_context(viewport=VIEWPORT)
                    _sign_in(warmup, base, password)
                    cookies[name] = warmup.cookies()
                    warmup.close()
                positions = home / "ui" / "graph-positions.json"
                names = list(trees)
                for i in range(runs):
                    for name in names if i % 2 == 0 else names[::-1]:
                        proc, base = servers[name]
                        r = rows[name]
                        positions.unlink(missing_ok=True)  # a first visit: the layout runs and fills the cache
                        context = browser.new_context(viewport=VIEWPORT)
                        context.add_cookies(cookies[name])
                        page = context.new_page()
                        r["floors"].append(_floor(page, base))
                        r["cold"].append(_measure(page, base, proc.pid))
                        weight = weight or _weight(page)
                        context.close()
                        context = browser.new_context(viewport=VIEWPORT)  # a later visit: positions from the cache
                        context.add_cookies(cookies[name])
                        page = context.new_page()
                        r["cached"].append(_measure(page, base, proc.pid))
                        r["warm"].append(_measure(page, base, proc.pid, reload=True))
                        r["frames"].append((_frames(page), _frames(page)))
                        context.close()
                browser.close()
        finally:
            for proc, _ in servers.values():
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
    return {"size": size, "seed": seed, "runs": runs, "weight": weight,
            "trees": {name: _summary(**r) for name, r in rows.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    parser.add_argument("--baseline", metavar="REF",
                        help="also serve this git ref's code (e.g. main) from the same seeded home, visits alternated")
    parser.add_argument("--write", action="store_true",
                        help="replace its marked block in the Web UI section of docs/benchmarks.md")
    parser.add_argument("--child-seed", nargs=3, metavar=("HOME", "SIZE", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_seed:
        home, size, cache = args.child_seed
        print(json.dumps(child_seed(Path(home), int(size), Path(cache))))
        return
    results, loads = [], []
    with tempfile.TemporaryDirectory(prefix="ormah-bench-ui-tree-") as tree_dir:
        trees = {"this tree": REPO}
        if args.baseline:
            ref = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.baseline], capture_output=True,
                                 text=True, check=True).stdout.strip()
            trees = {f"before ({ref})": _export_tree(ref, Path(tree_dir)), "after (this tree)": REPO}
        for size in (int(s) for s in args.sizes.split(",")):
            loads.append(os.getloadavg()[0])
            result = run_size(size, args.runs, args.cache_dir, trees)
            print(json.dumps(result), flush=True)
            results.append(result)
    with tempfile.TemporaryDirectory() as tmp:
        facts = machine(Path(tmp))
    machine_md = "\n".join(f"- {k}: {v}" for k, v in facts.items())
    loads.append(os.getloadavg()[0])
    text = report(results, machine_md, " to ".join(f"{x:.1f}" for x in (min(loads), max(loads))))
    print(text)
    if args.write:
        write_block("ui_graph", text)


if __name__ == "__main__":
    main()
