"""What the soak's slow answers had around them, from one run's trace (`python -m bench.soak --json FILE`).

    python -m bench.soak_trace FILE [--bin 0.1]

Per route, the answers above the route's p95 ("slow") against all of them: how many requests of each route were in
flight when each started (the closed loop keeps one per agent in flight, so the mix of them is what varies), the share
that overlapped a queued sleep cycle, and the share that spanned a stall (a `--bin` of wall time in which no request
of any route was answered while requests were in flight: a pause of the whole server, such as a GC pass, a lock
every route waits for, or a starved box). Then each route's p50 / p95 by the number of remembers in flight at its
start. A benchmark's report, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
from collections import defaultdict
from pathlib import Path

from bench._common import percentile

ROUTES = ("remember", "recall", "whisper", "feedback")


def in_flight(requests: list[tuple[str, float, float]]) -> list[dict[str, int]]:
    """For each request (route, start, seconds), the requests of each route running when it started (not itself)."""
    events = sorted([(start, 1, i) for i, (_, start, _) in enumerate(requests)]
                    + [(start + seconds, 0, i) for i, (_, start, seconds) in enumerate(requests)])
    running: dict[str, int] = defaultdict(int)
    out: list[dict[str, int]] = [{} for _ in requests]
    for _, kind, i in events:  # an end at the same instant as a start is counted before it
        route = requests[i][0]
        if kind == 1:
            out[i] = dict(running)
            running[route] += 1
        else:
            running[route] -= 1
    return out


def stalls(requests: list[tuple[str, float, float]], width: float) -> list[tuple[float, float]]:
    """The bins of `width` seconds in which requests were in flight and none was answered."""
    if not requests:
        return []
    starts = sorted(start for _, start, _ in requests)
    ends = sorted(start + seconds for _, start, seconds in requests)
    out = []
    at = starts[0]
    while at + width <= ends[-1]:
        answered = bisect.bisect_left(ends, at + width) - bisect.bisect_left(ends, at)
        running = bisect.bisect_left(starts, at + width) - bisect.bisect_right(ends, at)  # in flight in the bin
        if answered == 0 and running > 0:
            out.append((at, at + width))
        at += width
    return out


def _overlaps(start: float, end: float, windows: list[tuple[float, float]]) -> bool:
    return any(a < end and b > start for a, b in windows)


def report(trace: dict, width: float = 0.1) -> str:
    requests = [tuple(r) for r in trace["requests"]]
    cycles = [(a, b if b is not None else float("inf")) for a, b in trace.get("cycles", [])]
    flight = in_flight(requests)
    gaps = stalls(requests, width)
    lines = [f"{len(requests)} answers; {len(gaps)} stalls of {width * 1000:.0f} ms (no answer while requests ran), "
             f"{sum(b - a for a, b in gaps):.1f} s in all; {len(cycles)} sleep cycles queued"]
    lines.append("| route | answers | p50 / p95 / p99 ms | in flight at start (rem / rec / whi / fb), all -> slow | "
                 "during a cycle, all -> slow | spanning a stall, all -> slow |")
    lines.append("|---|---:|---|---|---|---|")
    for route in ROUTES:
        mine = [i for i, r in enumerate(requests) if r[0] == route]
        if not mine:
            continue
        values = [requests[i][2] for i in mine]
        p95 = percentile(values, 95)
        slow = [i for i in mine if requests[i][2] > p95]

        def mix(ids: list[int]) -> str:
            if not ids:
                return "-"
            return " / ".join(f"{sum(flight[i].get(r, 0) for i in ids) / len(ids):.2f}" for r in ROUTES)

        def share(ids: list[int], windows: list[tuple[float, float]]) -> str:
            if not ids:
                return "-"
            hit = sum(1 for i in ids if _overlaps(requests[i][1], requests[i][1] + requests[i][2], windows))
            return f"{hit / len(ids):.0%}"

        lines.append(f"| {route} | {len(mine)} | {percentile(values, 50) * 1000:.0f} / {p95 * 1000:.0f} / "
                     f"{percentile(values, 99) * 1000:.0f} | {mix(mine)} -> {mix(slow)} | "
                     f"{share(mine, cycles)} -> {share(slow, cycles)} | {share(mine, gaps)} -> {share(slow, gaps)} |")
    lines.append("")
    lines.append("p50 / p95 ms (answers) by the remembers in flight at the start:")
    for route in ROUTES:
        by: dict[int, list[float]] = defaultdict(list)
        for i, r in enumerate(requests):
            if r[0] == route:
                by[flight[i].get("remember", 0)].append(r[2])
        lines.append(f"- {route}: " + "; ".join(
            f"{n}: {percentile(v, 50) * 1000:.0f} / {percentile(v, 95) * 1000:.0f} ({len(v)})"
            for n, v in sorted(by.items())))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a `bench.soak --json` result")
    parser.add_argument("--bin", type=float, default=0.1, help="seconds of a stall bin")
    args = parser.parse_args(argv)
    result = json.loads(args.file.read_text())
    if "trace" not in result:
        print(f"{args.file}: no trace (written by an older bench.soak)", file=sys.stderr)
        return 2
    print(report(result["trace"], args.bin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
