"""Validate the labelled stores of bench/datasets/, sealed ones too (loader.SEALED_STORES: checked, their content never
printed).

    python -m bench.datasets.check [--overlap]

Checks, per store: unique keys and ids; every relevant, accepted and edge id exists; no outdated memory is
labelled relevant; identity answers are about the user; project answers sit in the query's space; off-topic
queries have no answer and every other query has one; each query's split equals the fixed-seed split
(bench/datasets/split.py). For the docs store it also reads every document from the installed distribution,
compares the declared licence with the installed one, keeps each under the 64 KB memory limit, and checks that each
query's anchor is in its relevant document (for the `middle` category, between 25% and 75% of the text). Exits 1
on any error.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from datetime import datetime

from bench.datasets.loader import (
    ALL_STORES, NO_ANSWER, SEALED_STORES, DatasetUnavailable, doc_text, installed_license, raw_store, raw_whisper,
)
from bench.datasets.split import SPLITS, assign_splits
from memory.domain.requests import RESERVED_TAG, tag_normal

MAX_CONTENT_BYTES = 64 * 1024
MIN_QUERIES_TOTAL = 150
MIN_WHISPER_PROMPTS = 250
KINDS = ("inject", "silent")
MIDDLE = (0.25, 0.75)
MEMORY_KEYS = ("key", "type", "tier", "space", "title", "tags", "about_self", "created", "confidence",
               "valid_until")


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))


def _norm_license(value: str) -> str:
    value = value.lower().replace(" license", "").replace("apache software", "apache-2.0")
    return re.sub(r"[^a-z0-9.]+", "-", value).strip("-")


def _same_license(declared: str, found: str) -> bool:
    """Equal after normalising; a bare family classifier ("BSD License") matches any licence of that family."""
    declared, found = _norm_license(declared), _norm_license(found)
    return declared == found or (found in {"bsd", "mit", "apache"} and declared.startswith(found))


def check_store(name: str, *, resolve: bool = True) -> tuple[list[str], Counter]:
    """(errors, queries per split/category) for one store; `resolve=False` skips reading installed packages."""
    return check_data(name, raw_store(name), resolve=resolve)


def check_data(name: str, data: dict, *, resolve: bool = True) -> tuple[list[str], Counter]:
    """check_store on a store's parsed JSON."""
    errors: list[str] = []
    now = _time(data["now"])
    memories: dict[str, dict] = {}
    for m in data["memories"]:
        missing = [k for k in MEMORY_KEYS if k not in m]
        if missing:
            errors.append(f"{name}: memory {m.get('key')!r} lacks {missing}")
        if m.get("key") in memories:
            errors.append(f"{name}: duplicate memory key {m['key']}")
        memories[m.get("key")] = m
        if "content" not in m and "source" not in m:
            errors.append(f"{name}: memory {m['key']} has neither content nor source")
        reserved = [t for t in m.get("tags") or () if tag_normal(t) == RESERVED_TAG]
        if reserved:
            errors.append(f"{name}: memory {m['key']} has the tag {reserved[0]!r}, reserved for the self node "
                          "(remember refuses it, so no bench could seed the store)")
    outdated = {k for k, m in memories.items() if m.get("valid_until") and _time(m["valid_until"]) <= now}
    for e in data["edges"]:
        for end in (e["source"], e["target"]):
            if end not in memories:
                errors.append(f"{name}: edge endpoint {end!r} does not exist")

    texts: dict[str, str] = {}
    if resolve:
        for key, m in memories.items():
            if "source" not in m:
                continue
            try:
                texts[key] = doc_text(m["source"])
            except DatasetUnavailable as exc:
                errors.append(f"{name}: memory {key}: {exc}")
                continue
            size = len(texts[key].encode())
            if size > MAX_CONTENT_BYTES:
                errors.append(f"{name}: memory {key} is {size} bytes (memory limit {MAX_CONTENT_BYTES})")
            declared, found = m.get("license", ""), installed_license(m["source"]["dist"])
            if not _same_license(declared, found):
                errors.append(f"{name}: memory {key}: licence {declared!r} but the installed package says {found!r}")

    expected_split = assign_splits(name, data["queries"], seed=data["split_seed"])
    seen: set[str] = set()
    counts: Counter = Counter()
    for q in data["queries"]:
        qid = q["id"]
        where = f"{name}: query {qid}"
        if qid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(qid)
        if q.get("split") not in SPLITS:
            errors.append(f"{where}: split must be one of {SPLITS}")
        elif q["split"] != expected_split[qid]:
            errors.append(f"{where}: split {q['split']!r} differs from the seeded split {expected_split[qid]!r}")
        counts[(q.get("split"), q["category"])] += 1
        if not q["query"].strip():
            errors.append(f"{where}: empty query")
        relevant, accept = q["relevant"], q.get("accept", [])
        if (q["category"] == NO_ANSWER) != (not relevant):
            errors.append(f"{where}: off-topic queries and only they have no relevant memory")
        for ref in [*relevant, *accept]:
            if ref not in memories:
                errors.append(f"{where}: label {ref!r} does not exist")
        for ref in relevant:
            if ref in outdated:
                errors.append(f"{where}: relevant {ref} is outdated at now; label the current memory")
            elif ref in memories:
                m = memories[ref]
                if q["category"] == "identity" and not m["about_self"]:
                    errors.append(f"{where}: identity answer {ref} is not about_self")
                if q.get("space") and m["space"] != q["space"]:
                    errors.append(f"{where}: relevant {ref} is in {m['space']!r}, not {q['space']!r}")
        anchor = q.get("anchor")
        if anchor and resolve:
            hits = [(ref, texts[ref].find(anchor) / len(texts[ref])) for ref in relevant
                    if ref in texts and anchor in texts[ref]]
            if not hits:
                errors.append(f"{where}: anchor {anchor!r} is in none of its relevant documents")
            elif q["category"] == "middle" and not any(MIDDLE[0] <= pos <= MIDDLE[1] for _, pos in hits):
                errors.append(f"{where}: anchor {anchor!r} is not in the middle of its document "
                              f"(at {', '.join(f'{p:.0%}' for _, p in hits)})")
        elif q["category"] == "middle":
            errors.append(f"{where}: a middle query needs an anchor")
    return errors, counts


def check_whisper(data: dict) -> tuple[list[str], Counter]:
    """(errors, prompts per split/kind) for the whisper scenarios: labels exist in the named stores, inject
    prompts expect something and silent ones nothing, spaces exist, and the split is the seeded one."""
    errors: list[str] = []
    keys: set[str] = set()
    spaces: set[str] = set()
    for name in data["stores"]:
        for m in raw_store(name)["memories"]:
            keys.add(m["key"])
            if m.get("space"):
                spaces.add(m["space"])
    expected_split = assign_splits(data["name"], data["prompts"], seed=data["split_seed"])
    counts: Counter = Counter()
    seen: set[str] = set()
    for p in data["prompts"]:
        where = f"whisper: prompt {p['id']}"
        if p["id"] in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(p["id"])
        if p.get("kind") not in KINDS:
            errors.append(f"{where}: kind must be one of {KINDS}")
        if p.get("split") != expected_split[p["id"]]:
            errors.append(f"{where}: split {p.get('split')!r} differs from the seeded split {expected_split[p['id']]!r}")
        counts[(p.get("split"), p.get("kind"))] += 1
        expect, accept = p.get("expect", []), p.get("accept", [])
        if (p.get("kind") == "inject") != bool(expect):
            errors.append(f"{where}: inject prompts and only they expect memories")
        for ref in [*expect, *accept]:
            if ref not in keys:
                errors.append(f"{where}: label {ref!r} does not exist")
        if p.get("space") is not None and p["space"] not in spaces:
            errors.append(f"{where}: space {p['space']!r} is used by no memory")
        if not isinstance(p.get("history", []), list):
            errors.append(f"{where}: history must be a list of prompts")
    if len(data["prompts"]) < MIN_WHISPER_PROMPTS:
        errors.append(f"whisper: only {len(data['prompts'])} prompts (need >= {MIN_WHISPER_PROMPTS})")
    return errors, counts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    errors: list[str] = []
    total = Counter()
    for name in ALL_STORES:
        store_errors, counts = check_store(name, resolve="--no-resolve" not in argv)
        errors += store_errors
        per_split = Counter()
        for (split, _), n in counts.items():
            per_split[split] += n
        if name in SEALED_STORES:  # structure only: its errors name keys and ids, never a memory's or query's text
            print(f"{name}: sealed, {sum(counts.values())} queries checked")
            continue
        total.update(per_split)
        cats = sorted({c for _, c in counts})
        print(f"{name}: {sum(counts.values())} queries (dev {per_split['dev']}, test {per_split['test']}); "
              + ", ".join(f"{c} {counts[('dev', c)]}/{counts[('test', c)]}" for c in cats))
    n = sum(total.values())
    print(f"all stores: {n} queries (dev {total['dev']}, test {total['test']})")
    if n < MIN_QUERIES_TOTAL:
        errors.append(f"only {n} labelled queries (need >= {MIN_QUERIES_TOTAL})")
    whisper_errors, wcounts = check_whisper(raw_whisper())
    errors += whisper_errors
    print("whisper: " + ", ".join(f"{split} {kind} {n}" for (split, kind), n in sorted(wcounts.items())))
    for e in errors:
        print(f"ERROR: {e}")
    print("OK" if not errors else f"FAILED with {len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
