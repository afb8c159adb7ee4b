"""Shared bench helpers: a deterministic corpus of memory-like texts, timing stats, RSS, machine facts, docs sections.

Nothing here imports Django, so a bench can set ORMAH_* variables before `django.setup()`.
"""

from __future__ import annotations

import os
import platform
import random
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
BENCH_DOC = REPO / "docs" / "benchmarks.md"
DEFAULT_CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ormah-bench"

# ---------------------------------------------------------------------------
# Corpus: vocabulary-based, deterministic, prefix-stable (the first 1k of the 10k corpus is the 1k corpus)
# ---------------------------------------------------------------------------

PEOPLE = [
    "Dana", "Marco", "Priya", "Tomasz", "Aiko", "Lena", "Kwame", "Sofia", "Ravi", "Ingrid", "Mateo", "Yusuf",
    "Chloe", "Hiroshi", "Amara", "Felix", "Noor", "Oskar", "Beatriz", "Emeka", "Hana", "Lucas", "Zofia", "Arjun",
]
RELATIONS = [
    "my manager", "a former colleague", "the on-call lead", "my partner", "my sister", "the landlord",
    "the thesis supervisor", "a neighbour", "the product owner", "the security reviewer", "my running coach",
]
PROJECTS = [
    "billing-service", "ormah-web", "garden-iot", "thesis", "infra", "mobile-app", "data-pipeline", "docs-site",
]
COMPONENTS = [
    "payment webhook handler", "invoice generator", "login page", "search index", "sync worker", "cron scheduler",
    "API gateway", "rate limiter", "retry queue", "feature flag service", "upload endpoint", "report exporter",
    "notification fan-out", "session store", "audit log", "metrics collector", "image resizer", "billing ledger",
    "moisture sensor firmware", "valve controller", "backup job", "DNS resolver", "ingress controller",
    "thesis bibliography", "chapter three draft", "settings panel", "graph view", "CSV importer",
]
TECH = [
    ("PostgreSQL", ["14", "15", "16"]), ("SQLite", ["3.45", "3.46"]), ("Redis", ["7.2", "7.4"]),
    ("Go", ["1.22", "1.23"]), ("Python", ["3.11", "3.12"]), ("SvelteKit", ["2.5", "2.8"]),
    ("Django", ["5.1", "5.2"]), ("k3s", ["1.29", "1.30"]), ("Kafka", ["3.6", "3.7"]),
    ("ESP32", ["S3", "C6"]), ("Node.js", ["20", "22"]), ("Rust", ["1.79", "1.82"]), ("InfluxDB", ["2.7"]),
    ("nginx", ["1.25", "1.27"]), ("Caddy", ["2.7", "2.8"]), ("MinIO", ["2024"]),
]
TOOLS = [
    "Neovim", "VS Code", "tmux", "ripgrep", "pytest", "basedpyright", "ruff", "Grafana", "Prometheus", "ntfy",
    "PagerDuty", "Vault", "SOPS", "Terraform", "Ansible", "Docker", "Podman", "GitHub Actions", "Woodpecker CI",
    "Zotero", "Obsidian", "Anki", "Bitwarden", "Tailscale", "WireGuard", "restic", "Syncthing",
]
ACTIVITIES = [
    "code review", "debugging", "writing", "note taking", "deployments", "load testing", "refactoring",
    "on-call", "reading papers", "planning sprints", "pairing", "profiling", "backups", "secrets management",
]
REASONS = [
    "it starts faster", "the keybindings stick", "it handles large files well", "the team already uses it",
    "it works offline", "it is easier to script", "the defaults are sane", "it does not phone home",
    "the error messages are clearer", "it survived the last outage", "the licence is permissive",
]
ACTIONS = [
    "migrate", "split", "rewrite", "cache", "shard", "deprecate", "pin", "vendor", "inline", "throttle",
    "retry", "batch", "index", "monitor", "document", "freeze", "parallelise", "simplify",
]
GOALS = [
    "cut p95 latency", "stop duplicate charges", "reduce the cloud bill", "make deploys boring",
    "unblock the mobile release", "pass the security audit", "keep the sensors alive through winter",
    "finish the literature review", "shrink the Docker image", "avoid lock contention", "halve the build time",
]
CONSEQUENCES = [
    "the old path stays behind a flag for two weeks", "rollback is a single revert", "we lose the nightly report",
    "on-call gets one more alert", "nobody needs to touch the schema", "the change needs a data backfill",
    "it costs about a day of work", "the client SDK must be bumped", "the dashboards need new panels",
]
SYMPTOMS = [
    "times out", "returns 502", "double-counts", "leaks file descriptors", "deadlocks", "drops messages",
    "logs the token", "rounds amounts down", "skips the last page", "panics on empty input", "uses 4 GB of RAM",
    "reports the wrong timezone", "retries forever",
]
CONDITIONS = [
    "the queue is above ten thousand items", "two workers start at once", "the payload has emoji",
    "daylight saving time changes", "the disk is nearly full", "a user has no email", "Wi-Fi drops for a minute",
    "the cache is cold", "the request is retried", "the upstream is slow", "the CSV has a BOM",
]
FIXES = [
    "adding an idempotency key", "a per-tenant lock", "streaming the response", "a bounded retry with jitter",
    "normalising to UTC at the edge", "closing the cursor in a finally block", "a partial index",
    "moving the work to a background job", "validating the header first", "raising the pool size to 20",
]
PLACES = [
    "Lisbon", "Porto", "Berlin", "Kraków", "Osaka", "Nairobi", "Toronto", "Utrecht", "Valencia", "Tallinn",
    "the office", "the coworking space", "the café on Rua Augusta", "the conference hall", "a video call",
]
TOPICS = [
    "the Q3 roadmap", "the incident review", "hiring a second SRE", "the thesis outline", "the pricing change",
    "moving to ARM runners", "the data retention policy", "the garden irrigation schedule", "vacation cover",
    "the API versioning plan", "the budget for new sensors", "the accessibility audit",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
METRICS = [
    ("p95 latency", "ms"), ("error rate", "%"), ("build time", "minutes"), ("memory use", "MB"),
    ("monthly cost", "EUR"), ("test runtime", "seconds"), ("soil moisture", "%"), ("queue depth", "items"),
    ("word count", "words"), ("cold start", "ms"),
]
TRENDS = ["dropped sharply", "crept up", "doubled", "halved", "stayed flat", "became spiky", "recovered"]
CHANGES = [
    "the connection pool change", "the Friday deploy", "the new firmware", "switching regions",
    "turning on compression", "the kernel upgrade", "enabling HTTP/2", "the index rebuild", "the heatwave",
]
CONCEPTS = [
    ("idempotency key", "a client-chosen id that makes a retried request safe to apply twice"),
    ("write-ahead log", "a journal of changes flushed before the data pages, so a crash can be replayed"),
    ("backpressure", "slowing producers down when consumers cannot keep up"),
    ("spreading activation", "passing relevance from a node to its neighbours, damped per hop"),
    ("reciprocal rank fusion", "merging ranked lists by summing one over rank plus a constant"),
    ("circuit breaker", "failing fast for a while after repeated errors from a dependency"),
    ("evapotranspiration", "water lost from soil and leaves together, which sets the irrigation need"),
    ("outbox pattern", "writing events to a table in the same transaction and publishing them later"),
    ("vector clock", "a per-node counter list that orders events without a global clock"),
    ("tombstone", "a marker that keeps a deleted record visible to replication until it is purged"),
]
DETAILS = [
    "Worth revisiting after the next release.", "Confirmed twice, so treat it as settled.",
    "{person} disagreed at first but came around.", "This came up again in the retro.",
    "The numbers are from the staging cluster, not production.", "Keep this in mind before touching {component}.",
    "Source: a long thread in the team chat.", "Not urgent, but it keeps biting newcomers.",
    "See also the runbook for {project}.", "Check with {person} before changing it.",
    "It only matters when {condition}.", "Took most of a {weekday} to figure out.",
]
TAGS = [
    "postgres", "latency", "billing", "security", "ops", "firmware", "writing", "ux", "testing", "ci", "infra",
    "incident", "cost", "family", "health", "travel", "reading", "tooling", "api", "data", "perf", "research",
]


def _values(rng: random.Random) -> dict:
    tech, versions = rng.choice(TECH)
    metric, unit = rng.choice(METRICS)
    concept, definition = rng.choice(CONCEPTS)
    n1 = rng.choice([5, 12, 40, 80, 120, 250, 400, 900, 1500])
    person, person2 = rng.sample(PEOPLE, 2)
    tool, tool2 = rng.sample(TOOLS, 2)
    return {
        "person": person, "person2": person2, "relation": rng.choice(RELATIONS),
        "project": rng.choice(PROJECTS), "component": rng.choice(COMPONENTS), "tech": tech,
        "version": rng.choice(versions), "tool": tool, "tool2": tool2,
        "activity": rng.choice(ACTIVITIES), "reason": rng.choice(REASONS), "action": rng.choice(ACTIONS),
        "goal": rng.choice(GOALS), "consequence": rng.choice(CONSEQUENCES), "symptom": rng.choice(SYMPTOMS),
        "condition": rng.choice(CONDITIONS), "fix": rng.choice(FIXES), "place": rng.choice(PLACES),
        "topic": rng.choice(TOPICS), "weekday": rng.choice(WEEKDAYS), "metric": metric, "unit": unit,
        "trend": rng.choice(TRENDS), "change": rng.choice(CHANGES), "concept": concept, "definition": definition,
        "n1": n1, "n2": max(1, int(n1 * rng.choice([0.3, 0.5, 0.7, 1.5, 2]))), "day": rng.randint(1, 28),
        "month": rng.choice(["January", "March", "May", "July", "September", "November"]),
    }


# (type, content template, title template or None)
TEMPLATES = [
    ("preference", "{person} prefers {tool} over {tool2} for {activity} because {reason}.", "{tool} for {activity}"),
    ("preference", "For {activity} I use {tool}; {reason}.", None),
    ("decision", "Decided to {action} the {component} in {project} to {goal}; {consequence}.",
     "{action} the {component}"),
    ("decision", "We will keep {tech} {version} for the {component} until {month}, because {reason}.", None),
    ("fact", "The {component} of {project} runs on {tech} {version} and {symptom} when {condition}.", None),
    ("fact", "{project} stores its data in {tech} {version}; backups go through {tool} every night.",
     "{project} storage"),
    ("event", "Met {person} in {place} on {weekday} to discuss {topic}; agreed to {action} the {component} "
              "by {month} {day}.", "Meeting with {person}"),
    ("event", "Incident on {weekday}: the {component} {symptom} when {condition}. Fixed by {fix}.",
     "Incident: {component}"),
    ("procedure", "To deploy {project}: run the {tool} pipeline, {action} the {component}, then watch the "
                  "{metric} panel for ten minutes.", "Deploying {project}"),
    ("procedure", "When the {component} {symptom}, first check whether {condition}, then try {fix}.", None),
    ("goal", "Goal for {month}: {goal} by bringing {metric} from {n1} to {n2} {unit}.", "{month} goal"),
    ("observation", "{metric} in {project} {trend} after {change} ({n1} to {n2} {unit}).", None),
    ("person", "{person} is {relation}, lives in {place} and cares a lot about {activity}.", "{person}"),
    ("person", "{person} and {person2} pair on {activity} every {weekday}; {person2} prefers {tool}.", None),
    ("concept", "A {concept} is {definition}. We rely on it in the {component}.", "{concept}"),
    ("project", "{project} is the {tech} work around the {component}; the current push is to {goal}.",
     "About {project}"),
]


@dataclass(frozen=True)
class Memory:
    """One generated memory (the fields a node needs, without Django or domain imports)."""

    id: str
    type: str
    title: str | None
    content: str
    tags: tuple[str, ...]
    space: str | None
    created: datetime
    connections: tuple[str, ...] = field(default=())


def corpus(n: int, *, seed: int = 1, exclude: set[str] | None = None, connect: bool = True) -> list[Memory]:
    """n distinct memories; the same seed always gives the same list, and a shorter list is a prefix."""
    rng = random.Random(seed)
    seen: set[str] = set(exclude or ())
    out: list[Memory] = []
    start = datetime(2025, 1, 1, tzinfo=UTC)
    while len(out) < n:
        kind, body, title_tpl = rng.choice(TEMPLATES)
        values = _values(rng)
        content = body.format(**values)
        content = content[0].upper() + content[1:]
        for chance in (0.45, 0.15):
            if rng.random() < chance:
                content += " " + rng.choice(DETAILS).format(**_values(rng))
        title = title_tpl.format(**values) if title_tpl and rng.random() < 0.6 else None
        key = f"{title or ''} {content}"
        if key in seen:
            continue
        seen.add(key)
        links: tuple[str, ...] = ()
        if connect and out and rng.random() < 0.3:
            links = tuple(dict.fromkeys(rng.choice(out).id for _ in range(rng.randint(1, 2))))
        out.append(Memory(
            id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            type=kind,
            title=title,
            content=content,
            tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))),
            space=None if rng.random() < 0.3 else rng.choice(PROJECTS),
            created=start + timedelta(seconds=rng.randint(0, 500 * 86400)),
            connections=links,
        ))
    return out


# ---------------------------------------------------------------------------
# Stats, memory, machine
# ---------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100, linear interpolation) of values."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def rss_mb() -> dict[str, float]:
    """Current (VmRSS) and peak (VmHWM) resident set size of this process in MiB."""
    out: dict[str, float] = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out["rss" if key == "VmRSS" else "peak"] = int(rest.split()[0]) / 1024
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out = {"rss": peak, "peak": peak}
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gib() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def _fs_type(path: Path) -> str:
    try:
        out = subprocess.run(["df", "-T", str(path)], capture_output=True, text=True, check=True).stdout
        return out.splitlines()[1].split()[1]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def machine(temp_root: Path) -> dict[str, str]:
    """Facts about the machine and interpreter that a benchmark result depends on (SQLite comes from a child)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 0
    return {
        "cpus": str(cpus),
        "cpu": _cpu_model(),
        "ram": f"{_mem_total_gib():.1f} GiB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "temp_fs": f"{_fs_type(temp_root)} ({temp_root})",
        "executable": sys.executable,
    }


# ---------------------------------------------------------------------------
# docs/benchmarks.md sections
# ---------------------------------------------------------------------------

def block_markers(name: str) -> tuple[str, str]:
    """The two lines around the block `python -m bench.{name}` writes into docs/benchmarks.md."""
    return f"<!-- begin bench.{name} -->", f"<!-- end bench.{name} -->"


def write_block(name: str, body: str, *, path: Path = BENCH_DOC) -> None:
    """Replace what lies between bench.{name}'s two marker lines (block_markers) in docs/benchmarks.md with body;
    every other line stays, so the records written below a bench's figures are kept.

    Refuses (SystemExit naming the markers, nothing written) unless each marker is there once, begin before end: a
    bench never guesses where its block ends (guessing "down to the next heading" deleted sessions of records).
    """
    begin, end = block_markers(name)
    lines = path.read_text().splitlines(keepends=True) if path.exists() else []
    marks = [line.strip() for line in lines]
    if marks.count(begin) != 1 or marks.count(end) != 1 or marks.index(begin) > marks.index(end):
        raise SystemExit(
            f"{path} needs the lines {begin!r} and {end!r}, once each and in that order, around the figures "
            f"bench.{name} writes (they are replaced; everything else stays). Nothing was written: add the markers "
            "or copy the output above by hand."
        )
    lines[marks.index(begin) + 1:marks.index(end)] = [body.strip("\n") + "\n\n"]  # a blank line ends a table
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("".join(lines))
    os.replace(tmp, path)
